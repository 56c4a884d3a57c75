package protoset

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"
)

// FuzzDecode feeds arbitrary bytes as messages of the common set's types
// (every type, chosen by the first input byte): decoding never fails the
// process, and whatever it accepts is valid JSON, the same on a second
// decode.
//
//	go test -run '^$' -fuzz FuzzDecode -fuzztime 60s ./chains/protoset/
func FuzzDecode(f *testing.F) {
	r := registry()
	types := make([]string, 0, len(r.types))
	for n := range r.types {
		types = append(types, "/"+string(n))
	}
	sort.Strings(types)
	msgs, err := recordedMessages()
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range msgs["cosmoshub"][:20] {
		if i := sort.SearchStrings(types, m.typeURL); i < len(types) && types[i] == m.typeURL {
			f.Add(uint16(i), m.value)
		}
	}
	f.Add(uint16(0), []byte{0x0a, 0x02, 0x08, 0x01})
	f.Fuzz(func(t *testing.T, pick uint16, value []byte) {
		typeURL := types[int(pick)%len(types)]
		out, complete, err := r.Decode(typeURL, value)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%s: invalid JSON %q", typeURL, out)
		}
		again, complete2, err := r.Decode(typeURL, value)
		if err != nil || !bytes.Equal(out, again) || complete != complete2 {
			t.Fatalf("%s: a second decode differs: %s / %s (%v)", typeURL, out, again, err)
		}
	})
}
