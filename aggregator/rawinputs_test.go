package aggregator_test

import (
	"strings"
	"testing"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/app"
)

// Every job names the raw rows it reads, so a raw filter that drops them
// is reported with the jobs it starves; a filter that drops nothing they
// read starves none.
func TestStarved(t *testing.T) {
	cfg, err := config.Load("../config/local.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	withFilter := func(kind string, f *config.RawFilter) *config.Config {
		c := *cfg
		c.Chains = append([]config.Chain(nil), cfg.Chains...)
		for i := range c.Chains {
			if c.Chains[i].Kind == kind {
				c.Chains[i].Raw = f
			}
		}
		return &c
	}
	tests := []struct {
		name   string
		kind   string
		filter *config.RawFilter
		want   []string // substrings, one per starved job
	}{
		{"no filter", "osmosis", nil, nil},
		{"bank events only dropped", "osmosis", &config.RawFilter{Events: config.TypeFilter{Exclude: []string{"coin_spent", "coin_received"}}},
			[]string{"engagement_conversions.localosmosis reads the messages and events its campaigns' goals name"}},
		{"superfluid events dropped", "osmosis", &config.RawFilter{Events: config.TypeFilter{Exclude: []string{"superfluid_*"}}},
			[]string{"dex_pool_rewards reads what the raw filter of localosmosis drops: [event superfluid_delegate event superfluid_increase_delegation event superfluid_undelegate event superfluid_undelegate_and_unbond_lock]",
				"engagement_conversions.localosmosis"}},
		{"only messages kept, of one type", "cosmoshub", &config.RawFilter{Messages: config.TypeFilter{Include: []string{"/cosmos.bank.v1beta1.MsgSend"}}},
			[]string{"engagement_conversions.localcosmos"}},
		{"hub events dropped", "cosmoshub", &config.RawFilter{Events: config.TypeFilter{Include: []string{"transfer"}}},
			[]string{"liquid_staking reads what the raw filter of localcosmos drops", "ics_rewards reads what the raw filter of localcosmos drops", "engagement_conversions.localcosmos"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := withFilter(tc.kind, tc.filter)
			got := aggregator.Starved(app.Jobs(c), c.Chains)
			if len(got) != len(tc.want) {
				t.Fatalf("starved %q, want %d lines like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("line %d: %q, want %q in it", i, got[i], w)
				}
			}
		})
	}
}
