package smartaccounts

import (
	"encoding/json"
	"testing"
)

// TestTypedOfKeepsDigits: a grant's numbers above 2^53 are served as
// stored (they went through float64 and lost digits).
func TestTypedOfKeepsDigits(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`{"@type":"/cosmos.feegrant.v1beta1.BasicAllowance","spend_limit":[{"denom":"uxion","amount":"5"}],"n":9007199254740993}`,
			`{"type_url":"/cosmos.feegrant.v1beta1.BasicAllowance","value":{"n":9007199254740993,"spend_limit":[{"amount":"5","denom":"uxion"}]}}`},
		{`{"@type":"/x.Y","ratio":0.1000000000000000055511151231257827}`,
			`{"type_url":"/x.Y","value":{"ratio":0.1000000000000000055511151231257827}}`},
	}
	for _, c := range cases {
		got, err := typedOf(c.in)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got)
		if string(b) != c.want {
			t.Errorf("typedOf(%s) = %s, want %s", c.in, b, c.want)
		}
	}
}
