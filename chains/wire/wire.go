// Package wire reads protobuf messages field by field (protowire), for
// the messages a chain kind decodes without their generated Go types.
package wire

import "google.golang.org/protobuf/encoding/protowire"

// Field is one decoded protobuf field: a varint, or bytes (strings,
// nested messages, packed repeated fields). Fixed-width fields are
// skipped with their value left 0.
type Field struct {
	Num   protowire.Number
	Type  protowire.Type
	Value uint64
	Bytes []byte
}

// Fields decodes the top level of a protobuf message.
func Fields(b []byte) ([]Field, error) {
	var out []Field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		f := Field{Num: num, Type: typ}
		switch typ {
		case protowire.VarintType:
			f.Value, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			f.Bytes, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		out = append(out, f)
	}
	return out, nil
}
