package protoset

import (
	"encoding/hex"
	"math/big"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// gogoOptions are the gogoproto field options that change what a chain's
// own JSON encoder (the SDK's gogoproto jsonpb) writes for a field: its Go
// type decides, not the wire type.
type gogoOptions struct {
	// nonNullable: (gogoproto.nullable) = false. An absent message field is
	// a zero Go struct, written as an object of defaults, not null.
	nonNullable bool
	// stdtime/stdduration: a time.Time or time.Duration field; absent and
	// non-nullable, it is the zero time or 0s.
	stdtime, stdduration bool
	// custom is what a customtype or casttype changes in the JSON.
	custom customKind
}

type customKind uint8

const (
	customNone    customKind = iota
	customInt                // math.Int, math.Uint: "" on the wire is "0"
	customDec18              // math.LegacyDec and its aliases: wire text is the value times 10^18
	customDec36              // osmomath.BigDec: times 10^36
	customDec27              // Neutron's math.PrecDec: times 10^27
	customHex                // bytes.HexBytes: upper-case hex, not base64
	customRawJSON            // wasmd's RawContractMessage, json.RawMessage: the bytes are JSON, written as such
	customGobInt             // dYdX's dtypes.SerializableInt: a big.Int's gob bytes, written as a decimal string
)

// Field numbers of the gogoproto extensions of FieldOptions
// (gogoproto/gogo.proto).
const (
	gogoNullable    = 65001
	gogoCustomType  = 65003
	gogoCastType    = 65007
	gogoStdTime     = 65010
	gogoStdDuration = 65011
)

// gogoOf reads a field's gogoproto options from its descriptor options,
// whether or not the gogoproto extensions are linked into this binary
// (they arrive as unknown fields when not).
func gogoOf(fd protoreflect.FieldDescriptor) gogoOptions {
	var o gogoOptions
	opts, ok := fd.Options().(*descriptorpb.FieldOptions)
	if !ok || opts == nil {
		return o
	}
	b, err := proto.MarshalOptions{}.Marshal(opts)
	if err != nil {
		return o
	}
	var customType, castType string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break
		}
		b = b[n:]
		switch {
		case typ == protowire.VarintType && (num == gogoNullable || num == gogoStdTime || num == gogoStdDuration):
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return o
			}
			switch num {
			case gogoNullable:
				o.nonNullable = v == 0
			case gogoStdTime:
				o.stdtime = v != 0
			case gogoStdDuration:
				o.stdduration = v != 0
			}
			n = m
		case typ == protowire.BytesType && (num == gogoCustomType || num == gogoCastType):
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return o
			}
			if num == gogoCustomType {
				customType = string(v)
			} else {
				castType = string(v)
			}
			n = m
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			break
		}
		b = b[n:]
	}
	o.custom = customOf(customType, fd.Kind())
	if o.custom == customNone && fd.Kind() == protoreflect.BytesKind {
		switch {
		case isHexBytes(castType):
			o.custom = customHex
		case strings.HasSuffix(castType, "RawContractMessage") || castType == "encoding/json.RawMessage":
			o.custom = customRawJSON
		}
	}
	return o
}

// customOf classifies a customtype by the Go type it names.
func customOf(goType string, kind protoreflect.Kind) customKind {
	if goType == "" {
		return customNone
	}
	name := goType[strings.LastIndexByte(goType, '/')+1:] // e.g. math.LegacyDec
	switch {
	case isHexBytes(goType):
		if kind == protoreflect.BytesKind {
			return customHex
		}
	case strings.HasSuffix(name, ".BigDec"):
		return customDec36
	case strings.HasSuffix(name, ".PrecDec"):
		return customDec27
	case strings.HasSuffix(name, ".SerializableInt"):
		if kind == protoreflect.BytesKind {
			return customGobInt
		}
	case strings.HasSuffix(name, ".LegacyDec") || name == "types.Dec" || name == "osmomath.Dec":
		return customDec18
	case strings.HasSuffix(name, ".Int") || strings.HasSuffix(name, ".Uint"):
		return customInt
	}
	return customNone
}

func isHexBytes(goType string) bool { return strings.HasSuffix(goType, "libs/bytes.HexBytes") }

// appendDecimal appends the decimal string of a fixed-point integer text
// with places decimals, as math.LegacyDec.String writes it ("-0.5" is
// "-0.500000000000000000"); ok is false when text is not an integer.
func appendDecimal(b []byte, text string, places int) ([]byte, bool) {
	neg := strings.HasPrefix(text, "-")
	digits := strings.TrimPrefix(text, "-")
	if digits == "" {
		digits = "0" // a nil Dec is zero
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return b, false
		}
	}
	digits = strings.TrimLeft(digits, "0")
	if neg && digits != "" {
		b = append(b, '-')
	}
	if len(digits) <= places {
		b = append(b, '0', '.')
		for i := len(digits); i < places; i++ {
			b = append(b, '0')
		}
		return append(b, digits...), true
	}
	b = append(b, digits[:len(digits)-places]...)
	b = append(b, '.')
	return append(b, digits[len(digits)-places:]...), true
}

// appendUpperHex appends bytes as HexBytes.MarshalJSON writes them.
func appendUpperHex(b, v []byte) []byte {
	start := len(b)
	b = hex.AppendEncode(b, v)
	for i := start; i < len(b); i++ {
		if c := b[i]; c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return b
}

// appendGobInt appends the decimal string of a big.Int in its GobEncode
// form (a version byte whose low bit is the sign, then the big-endian
// magnitude; empty is zero), as dYdX's SerializableInt writes it in JSON.
func appendGobInt(b, v []byte) ([]byte, bool) {
	if len(v) == 0 {
		return append(b, '0'), true
	}
	if v[0]>>1 != 1 { // gob version 1
		return b, false
	}
	var x big.Int
	x.SetBytes(v[1:])
	if v[0]&1 == 1 {
		x.Neg(&x)
	}
	return x.Append(b, 10), true
}
