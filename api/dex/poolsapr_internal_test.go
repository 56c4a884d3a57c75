package dex

import (
	"math/big"
	"testing"
)

// TestParseRat: zeros (the usual value of most sources) skip SetString and
// are still exactly zero; everything else parses as SetString does,
// malformed text included.
func TestParseRat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" = not parsed
	}{
		{"0", "0/1"}, {"0.000000000000000000", "0/1"}, {"-0.0", "0/1"}, {"00", "0/1"},
		{"10", "10/1"}, {"0.5", "1/2"}, {"-0.25", "-1/4"}, {"308.480834314517063308", "77120208578629265827/250000000000000000"},
		{"", ""}, {".", ""}, {"-", ""}, {"0.0x", ""}, {"--0", ""},
	} {
		got, ok := parseRat(c.in)
		_, okLib := new(big.Rat).SetString(c.in)
		if ok != okLib {
			t.Errorf("%q: parsed %v, SetString %v", c.in, ok, okLib)
		}
		if !ok {
			if c.want != "" {
				t.Errorf("%q: not parsed, want %s", c.in, c.want)
			}
			continue
		}
		if got.String() != c.want {
			t.Errorf("%q: %s, want %s", c.in, got, c.want)
		}
	}
}
