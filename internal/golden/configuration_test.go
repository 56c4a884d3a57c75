package golden_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

// TestMissingConfigurationIsNamed serves the indexed recordings with one
// piece of configuration taken away at a time: every answer that changes
// is a 503 of type not-configured naming that configuration key (never the
// "not indexed yet" of data that indexing would bring), and the endpoints
// listed are among them. The recordings' chains take no state snapshots,
// so the endpoints built on them name snapshot_every with the full config.
func TestMissingConfigurationIsNamed(t *testing.T) {
	t.Parallel()
	db, full := indexed(t)
	answers := func(cfg *config.Config) map[string]answer {
		srv := serveAt(t, db, cfg)
		out := map[string]answer{}
		for _, op := range route.Table() {
			if op.Method != http.MethodGet {
				continue
			}
			resp, body := srv.Get(t, target(cfg, op, baseValues(op)))
			var p problem.Problem
			_ = json.Unmarshal(body, &p)
			out[op.Path] = answer{resp.StatusCode, p.Type, p.ConfigKey, resp.Header.Get("Retry-After")}
		}
		return out
	}
	before := answers(full)
	for _, c := range []struct {
		key   string
		strip func(*config.Config)
		paths []string
	}{
		{"perp.buystake_address", func(c *config.Config) { c.Perp.BuyStakeAddress = "" }, []string{"/perp/tokenomics/buystake_address_metrics"}},
		{"perp.treasury_subdao", func(c *config.Config) { c.Perp.TreasurySubDAO = nil }, []string{"/tokenomics/wallets/treasury_subdao"}},
		{"staking.providers", func(c *config.Config) { c.Staking.Providers = nil }, []string{"/staking/liquid/share_by_provider", "/staking/liquid/flow_by_provider"}},
		{"staking.consumer_channels", func(c *config.Config) { c.Staking.ConsumerChannels = nil }, []string{"/aez/revenue_share_by_consumer"}},
		{"earn.strategies", func(c *config.Config) { c.Earn.Strategies = nil }, []string{"/earn/strategies", "/earn/strategies/{strategy}/apr",
			"/earn/strategies/{strategy}/tvl", "/earn/strategies/{strategy}/balance/{address}"}},
		{"ibc.channels", func(c *config.Config) { c.IBC.Channels = nil }, []string{"/ibc/v1/source/{source}/destination/{destination}"}},
		{"chains", func(c *config.Config) {
			c.Chains = slices.DeleteFunc(c.Chains, func(ch config.Chain) bool { return ch.Kind == "dydx" })
		}, []string{"/perp/tokenomics/chain_revenue", "/trading/open_interest", "/liquidation/list"}},
	} {
		t.Run(c.key, func(t *testing.T) {
			cfg := *full
			cfg.Chains = slices.Clone(full.Chains)
			c.strip(&cfg)
			after := answers(&cfg)
			for path, a := range after {
				if a == before[path] {
					continue
				}
				if want := (answer{503, problem.NotConfiguredType, c.key, ""}); a != want {
					t.Errorf("%s: %+v (with the key: %+v), want %+v", path, a, before[path], want)
				}
			}
			for _, path := range c.paths {
				if after[path].configKey != c.key {
					t.Errorf("%s: %+v, want not-configured %s", path, after[path], c.key)
				}
			}
		})
	}
	// Snapshots are off on the recordings' chains: the endpoints built on
	// them say so, as the supply does.
	for path, key := range map[string]string{
		"/supply/v1/metrics":                "chains[localosmosis].snapshot_every",
		"/staking/liquid/share_by_provider": "chains[localcosmos].snapshot_every",
	} {
		if a := before[path]; a != (answer{503, problem.NotConfiguredType, key, ""}) {
			t.Errorf("%s: %+v, want not-configured %s", path, a, key)
		}
	}
}

type answer struct {
	status         int
	typ, configKey string
	retryAfter     string
}
