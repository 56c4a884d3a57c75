package protoset

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MessageJSON returns the proto3 JSON of a message given its type URL and
// protobuf bytes, byte for byte as a cosmos-sdk chain writes it
// (codec.ProtoMarshalJSON: gogoproto jsonpb with original field names and
// defaults emitted; Any as {"@type":…} with its message's fields; the
// Go types of gogoproto customtypes, e.g. LegacyDec as a decimal string).
// It fails with ErrUnknownType for a type the registry does not know, and
// with another error when the bytes do not decode or a nested Any is of an
// unknown type. It never panics.
func (r *Registry) MessageJSON(typeURL string, value []byte) (json.RawMessage, error) {
	out, _, err := r.Decode(typeURL, value)
	return out, err
}

// Decode is MessageJSON that also reports whether the JSON holds all of
// the message: complete is false when the bytes carry fields the
// descriptors do not define (a newer version of the chain added them),
// which the JSON then leaves out; keep the bytes too.
func (r *Registry) Decode(typeURL string, value []byte) (out json.RawMessage, complete bool, err error) {
	t, ok := r.lookup(typeURL)
	if !ok {
		return nil, false, fmt.Errorf("%s: %w", typeURL, ErrUnknownType)
	}
	defer func() {
		if p := recover(); p != nil {
			out, complete, err = nil, false, fmt.Errorf("%s: panic while decoding: %v", typeURL, p)
		}
	}()
	m := t.typ.New()
	if err := proto.Unmarshal(value, m.Interface()); err != nil {
		return nil, false, fmt.Errorf("%s: %w", typeURL, err)
	}
	e := encoder{r: r, b: make([]byte, 0, 64+2*len(value))}
	if err := e.message(t, m, ""); err != nil {
		return nil, false, fmt.Errorf("%s: %w", typeURL, err)
	}
	return e.b, !e.unknownFields, nil
}

// maxDepth bounds nesting (Anys in Anys) as the protobuf decoder does.
const maxDepth = 100

type encoder struct {
	r     *Registry
	b     []byte
	depth int
	// unknownFields: some message held fields its descriptor lacks.
	unknownFields bool
}

// message writes m; a non-empty typeURL makes it the body of an Any.
func (e *encoder) message(t *msgType, m protoreflect.Message, typeURL string) error {
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > maxDepth {
		return fmt.Errorf("messages nested deeper than %d", maxDepth)
	}
	if len(m.GetUnknown()) > 0 {
		e.unknownFields = true
	}
	if t.wkt != notWellKnown {
		if typeURL == "" {
			return e.wellKnown(t, m)
		}
		e.b = append(e.b, `{"@type":`...)
		e.b = appendQuoted(e.b, typeURL)
		e.b = append(e.b, `,"value":`...)
		if err := e.wellKnown(t, m); err != nil {
			return err
		}
		e.b = append(e.b, '}')
		return nil
	}
	e.b = append(e.b, '{')
	first := true
	if typeURL != "" {
		e.b = append(e.b, `"@type":`...)
		e.b = appendQuoted(e.b, typeURL)
		first = false
	}
	for i := range t.fields {
		f := &t.fields[i]
		if f.fd.ContainingOneof() != nil && !m.Has(f.fd) {
			continue // gogoproto writes only the member that is set
		}
		if !first {
			e.b = append(e.b, ',')
		}
		first = false
		e.b = append(e.b, f.name...)
		e.b = append(e.b, ':')
		if err := e.field(f, m); err != nil {
			return fmt.Errorf("%s: %w", f.fd.Name(), err)
		}
	}
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) field(f *field, m protoreflect.Message) error {
	fd := f.fd
	switch {
	case fd.IsList():
		l := m.Get(fd).List()
		e.b = append(e.b, '[')
		for i := 0; i < l.Len(); i++ {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			if err := e.value(f, fd, l.Get(i)); err != nil {
				return err
			}
		}
		e.b = append(e.b, ']')
		return nil
	case fd.IsMap():
		return e.mapValue(f, m.Get(fd).Map())
	case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
		if m.Has(fd) {
			return e.value(f, fd, m.Get(fd))
		}
		switch {
		case !f.gogo.nonNullable:
			e.b = append(e.b, "null"...)
		case f.gogo.stdtime:
			e.b = append(e.b, `"0001-01-01T00:00:00Z"`...)
		case f.gogo.stdduration:
			e.b = append(e.b, `"0s"`...)
		default: // a zero struct: its defaults
			t, err := e.typeOf(fd.Message())
			if err != nil {
				return err
			}
			return e.message(t, t.typ.New(), "")
		}
		return nil
	}
	if fd.Kind() == protoreflect.BytesKind && f.gogo.custom == customNone && len(m.Get(fd).Bytes()) == 0 {
		// gogoproto leaves an absent bytes field nil and its jsonpb
		// writes null (a gogoproto sender never encodes an empty one).
		e.b = append(e.b, "null"...)
		return nil
	}
	return e.value(f, fd, m.Get(fd))
}

func (e *encoder) typeOf(md protoreflect.MessageDescriptor) (*msgType, error) {
	t, ok := e.r.types[md.FullName()]
	if !ok || md.IsPlaceholder() {
		return nil, fmt.Errorf("message type %s is not in the descriptors", md.FullName())
	}
	return t, nil
}

// value writes one value of fd (an element of a list or map, or a
// singular field).
func (e *encoder) value(f *field, fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		e.b = strconv.AppendBool(e.b, v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		e.b = strconv.AppendInt(e.b, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		e.b = strconv.AppendUint(e.b, v.Uint(), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		e.b = append(e.b, '"')
		e.b = strconv.AppendInt(e.b, v.Int(), 10)
		e.b = append(e.b, '"')
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		e.b = append(e.b, '"')
		e.b = strconv.AppendUint(e.b, v.Uint(), 10)
		e.b = append(e.b, '"')
	case protoreflect.FloatKind:
		return e.float(v.Float(), 32)
	case protoreflect.DoubleKind:
		return e.float(v.Float(), 64)
	case protoreflect.StringKind:
		return e.str(f, v.String())
	case protoreflect.BytesKind:
		return e.bytes(f, v.Bytes())
	case protoreflect.EnumKind:
		n := v.Enum()
		if ev := fd.Enum().Values().ByNumber(n); ev != nil && !fd.Enum().IsPlaceholder() {
			e.b = appendQuoted(e.b, string(ev.Name()))
		} else {
			e.b = strconv.AppendInt(e.b, int64(n), 10)
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		t, err := e.typeOf(fd.Message())
		if err != nil {
			return err
		}
		return e.message(t, v.Message(), "")
	default:
		return fmt.Errorf("field kind %v", fd.Kind())
	}
	return nil
}

func (e *encoder) str(f *field, s string) error {
	var opts gogoOptions
	if f != nil {
		opts = f.gogo
	}
	switch opts.custom {
	case customInt:
		if s == "" {
			if !opts.nonNullable {
				e.b = append(e.b, "null"...)
				return nil
			}
			s = "0"
		}
	case customDec18, customDec27, customDec36:
		if s == "" && !opts.nonNullable {
			e.b = append(e.b, "null"...)
			return nil
		}
		places := map[customKind]int{customDec18: 18, customDec27: 27, customDec36: 36}[opts.custom]
		e.b = append(e.b, '"')
		var ok bool
		if e.b, ok = appendDecimal(e.b, s, places); !ok {
			return fmt.Errorf("%q is not a fixed-point decimal", s)
		}
		e.b = append(e.b, '"')
		return nil
	}
	e.b = appendQuoted(e.b, s)
	return nil
}

func (e *encoder) bytes(f *field, v []byte) error {
	if f != nil {
		switch f.gogo.custom {
		case customHex:
			e.b = append(e.b, '"')
			e.b = appendUpperHex(e.b, v)
			e.b = append(e.b, '"')
			return nil
		case customDec18, customDec27, customDec36, customInt:
			return e.str(f, string(v))
		case customRawJSON:
			// encoding/json validates, compacts and HTML-escapes it.
			j, err := json.Marshal(json.RawMessage(v))
			if err != nil {
				return fmt.Errorf("not JSON: %w", err)
			}
			e.b = append(e.b, j...)
			return nil
		case customGobInt:
			e.b = append(e.b, '"')
			var ok bool
			if e.b, ok = appendGobInt(e.b, v); !ok {
				return fmt.Errorf("not a gob-encoded integer")
			}
			e.b = append(e.b, '"')
			return nil
		}
	}
	e.b = append(e.b, '"')
	e.b = base64.StdEncoding.AppendEncode(e.b, v)
	e.b = append(e.b, '"')
	return nil
}

// float writes a float as gogoproto jsonpb does: encoding/json's form, and
// the strings NaN, Infinity, -Infinity.
func (e *encoder) float(f float64, bits int) error {
	switch {
	case math.IsNaN(f):
		e.b = append(e.b, `"NaN"`...)
	case math.IsInf(f, 1):
		e.b = append(e.b, `"Infinity"`...)
	case math.IsInf(f, -1):
		e.b = append(e.b, `"-Infinity"`...)
	default:
		var j []byte
		var err error
		if bits == 32 {
			j, err = json.Marshal(float32(f))
		} else {
			j, err = json.Marshal(f)
		}
		if err != nil {
			return err
		}
		e.b = append(e.b, j...)
	}
	return nil
}

// mapValue writes a map with its keys sorted (numerically for integer
// keys), as gogoproto jsonpb does.
func (e *encoder) mapValue(f *field, m protoreflect.Map) error {
	keys := make([]protoreflect.MapKey, 0, m.Len())
	m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	kd := f.fd.MapKey()
	slices.SortFunc(keys, func(a, b protoreflect.MapKey) int {
		switch kd.Kind() {
		case protoreflect.StringKind:
			return strings.Compare(a.String(), b.String())
		case protoreflect.BoolKind:
			ab, bb := a.Bool(), b.Bool()
			switch {
			case ab == bb:
				return 0
			case !ab:
				return -1
			}
			return 1
		case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
			return cmp.Compare(a.Uint(), b.Uint())
		}
		return cmp.Compare(a.Int(), b.Int())
	})
	vd := f.fd.MapValue()
	vf := &field{fd: vd, gogo: gogoOf(vd)}
	e.b = append(e.b, '{')
	for i, k := range keys {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		if kd.Kind() == protoreflect.StringKind {
			e.b = appendQuoted(e.b, k.String())
		} else {
			e.b = appendQuoted(e.b, k.Value().String())
		}
		e.b = append(e.b, ':')
		if err := e.value(vf, vd, m.Get(k)); err != nil {
			return err
		}
	}
	e.b = append(e.b, '}')
	return nil
}

// appendQuoted appends s as encoding/json quotes it (HTML-escaped,
// invalid UTF-8 replaced), which is what gogoproto jsonpb writes.
func appendQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s)
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func quote(s string) string { return string(appendQuoted(nil, s)) }

// wellKnown identifies the google.protobuf types with a JSON form of
// their own.
type wellKnown uint8

const (
	notWellKnown wellKnown = iota
	wktAny
	wktTimestamp
	wktDuration
	wktWrapper
	wktStruct
	wktValue
	wktList
	wktEmpty
	wktFieldMask
)

func wellKnownOf(n protoreflect.FullName) wellKnown {
	if !strings.HasPrefix(string(n), "google.protobuf.") {
		return notWellKnown
	}
	switch strings.TrimPrefix(string(n), "google.protobuf.") {
	case "Any":
		return wktAny
	case "Timestamp":
		return wktTimestamp
	case "Duration":
		return wktDuration
	case "DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value", "BoolValue", "StringValue", "BytesValue":
		return wktWrapper
	case "Struct":
		return wktStruct
	case "Value":
		return wktValue
	case "ListValue":
		return wktList
	case "Empty":
		return wktEmpty
	case "FieldMask":
		return wktFieldMask
	}
	return notWellKnown
}

func (e *encoder) wellKnown(t *msgType, m protoreflect.Message) error {
	fs := t.desc.Fields()
	switch t.wkt {
	case wktAny:
		url := m.Get(fs.ByNumber(1)).String()
		inner, ok := e.r.lookup(url)
		if !ok {
			return fmt.Errorf("unknown type URL %s", url)
		}
		im := inner.typ.New()
		if err := proto.Unmarshal(m.Get(fs.ByNumber(2)).Bytes(), im.Interface()); err != nil {
			return fmt.Errorf("%s: %w", url, err)
		}
		return e.message(inner, im, url)
	case wktTimestamp:
		s, ns := m.Get(fs.ByNumber(1)).Int(), m.Get(fs.ByNumber(2)).Int()
		if ns < 0 || ns >= 1e9 {
			return fmt.Errorf("invalid timestamp nanos %d", ns)
		}
		x := time.Unix(s, ns).UTC().Format("2006-01-02T15:04:05.000000000")
		e.b = append(e.b, '"')
		e.b = append(e.b, trimFraction(x)...)
		e.b = append(e.b, `Z"`...)
	case wktDuration:
		s, ns := m.Get(fs.ByNumber(1)).Int(), m.Get(fs.ByNumber(2)).Int()
		if ns <= -1e9 || ns >= 1e9 || (s > 0 && ns < 0) || (s < 0 && ns > 0) {
			return fmt.Errorf("invalid duration %ds %dns", s, ns)
		}
		f := "%d.%09d"
		if ns < 0 {
			ns = -ns
			if s == 0 {
				f = "-%d.%09d"
			}
		}
		e.b = append(e.b, '"')
		e.b = append(e.b, trimFraction(fmt.Sprintf(f, s, ns))...)
		e.b = append(e.b, `s"`...)
	case wktWrapper:
		fd := fs.ByNumber(1)
		return e.value(&field{fd: fd}, fd, m.Get(fd))
	case wktEmpty:
		e.b = append(e.b, "{}"...)
	case wktStruct:
		fd := fs.ByNumber(1)
		return e.mapValue(&field{fd: fd}, m.Get(fd).Map())
	case wktList:
		fd := fs.ByNumber(1)
		return e.field(&field{fd: fd}, m)
	case wktValue:
		od := t.desc.Oneofs().ByName("kind")
		fd := m.WhichOneof(od)
		if fd == nil || fd.Name() == "null_value" {
			e.b = append(e.b, "null"...)
			return nil
		}
		return e.value(&field{fd: fd}, fd, m.Get(fd))
	case wktFieldMask:
		l := m.Get(fs.ByNumber(1)).List()
		paths := make([]string, l.Len())
		for i := range paths {
			paths[i] = JSONName(l.Get(i).String())
		}
		e.b = appendQuoted(e.b, strings.Join(paths, ","))
	}
	return nil
}

// trimFraction drops trailing groups of three zero digits of a fraction,
// then the fraction itself when it is all zeros (0, 3, 6 or 9 digits).
func trimFraction(x string) string {
	x = strings.TrimSuffix(x, "000")
	x = strings.TrimSuffix(x, "000")
	return strings.TrimSuffix(x, ".000")
}

// JSONName is the proto3 JSON name of a field name (lowerCamelCase:
// "client_message" is "clientMessage"), as protoc derives json_name.
func JSONName(s string) string {
	var b strings.Builder
	up := false
	for _, c := range s {
		if c == '_' {
			up = true
			continue
		}
		if up && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		b.WriteRune(c)
	}
	return b.String()
}
