// Package neutrontest reads the node's own x/dex state from the recorded
// Neutron localnet (localnet.Neutron) for tests.
package neutrontest

import (
	"encoding/json"
	"testing"

	"github.com/chainlens/chainlens/internal/localnet"
)

// Reserve is one maker-side reserve of a pool or tranche at a tick.
type Reserve struct {
	Token0, Token1, Maker string
	Tick                  int64  // tick index taker to maker
	Key                   string // "fee N" or the tranche key
	Reserves              string // base units of the maker denom
}

// Reserves are the node's pool and active tranche reserves at the last
// height (truth/dex_pairs_liquidity.json), zero reserves left out.
func Reserves(t testing.TB) []Reserve {
	t.Helper()
	type key struct {
		Pair struct {
			Maker string `json:"maker_denom"`
			Taker string `json:"taker_denom"`
		} `json:"trade_pair_id"`
		Tick    json.Number `json:"tick_index_taker_to_maker"`
		Fee     string      `json:"fee"`
		Tranche string      `json:"tranche_key"`
	}
	type entry struct {
		Key      key    `json:"key"`
		Reserves string `json:"reserves_maker_denom"`
	}
	var truth struct {
		Pairs map[string]map[string]json.RawMessage `json:"pairs"`
	}
	localnet.Neutron.Truth(t, "dex_pairs_liquidity.json", &truth)
	var out []Reserve
	for _, sides := range truth.Pairs {
		for name, raw := range sides {
			var list struct {
				Pools    []entry `json:"pool_reserves"`
				Tranches []entry `json:"limit_order_tranche"`
			}
			if err := json.Unmarshal(raw, &list); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(name) < 4 || name[:4] == "tick" { // tick_liquidity repeats the two lists
				continue
			}
			for _, e := range append(list.Pools, list.Tranches...) {
				if e.Reserves == "0" {
					continue
				}
				tick, _ := e.Key.Tick.Int64()
				t0, t1 := e.Key.Pair.Maker, e.Key.Pair.Taker
				if t1 < t0 {
					t0, t1 = t1, t0
				}
				k := "fee " + e.Key.Fee
				if e.Key.Tranche != "" {
					k = e.Key.Tranche
				}
				out = append(out, Reserve{t0, t1, e.Key.Pair.Maker, tick, k, e.Reserves})
			}
		}
	}
	return out
}
