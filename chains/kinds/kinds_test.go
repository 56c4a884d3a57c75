package kinds

import (
	"strings"
	"testing"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/config"
)

// A chain of a generic kind decodes its own modules' messages with the
// shipped sets it names; an unknown set name stops it with an error naming
// the chain and the set.
func TestDescriptorSets(t *testing.T) {
	const injectiveMsg = "/injective.exchange.v1beta1.MsgCreateSpotLimitOrder"
	tests := []struct {
		name    string
		chain   config.Chain
		decodes bool
		err     string
	}{
		{"generic kind", config.Chain{ID: "injective-1", Kind: "cosmos", Bech32Prefix: "inj"}, false, ""},
		{"with the injective set", config.Chain{ID: "injective-1", Kind: "cosmos", Bech32Prefix: "inj", DescriptorSets: []string{"injective"}}, true, ""},
		{"a set that is not shipped", config.Chain{ID: "injective-1", Kind: "cosmos", Bech32Prefix: "inj", DescriptorSets: []string{"injectiv"}}, false,
			`chain injective-1: descriptor_sets: descriptor set "injectiv" is not shipped`},
		{"the kind's own set", config.Chain{ID: "osmosis-1", Kind: "osmosis", Bech32Prefix: "osmo"}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Adapter(tc.chain)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, _, derr := a.(chains.DescriptorAdapter).MessageDecoderAt(1).Decode(injectiveMsg, nil)
			if (derr == nil) != tc.decodes {
				t.Errorf("decodes %s: %v", injectiveMsg, derr)
			}
		})
	}
}
