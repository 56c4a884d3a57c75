// Package neutrontest indexes the recorded Neutron localnet
// (testdata/localnet/neutron, x/dex activity) for tests.
package neutrontest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/neutron"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/replaytest"
)

// ChainID and LastHeight of the recording.
const (
	ChainID    = "localneutron"
	LastHeight = 193
)

// Dir is the recording folder.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "localnet", "neutron")
}

// Chain is the config of the recording.
func Chain() config.Chain {
	return config.Chain{ID: ChainID, Kind: neutron.Kind, BatchSize: 50, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: "neutron", Assets: Assets()}
}

// Assets are the recording's denoms as config/local.yaml declares them.
func Assets() []config.Asset {
	return []config.Asset{
		{Denom: "untrn", Symbol: "NTRN", Name: "Neutron", Display: "ntrn", Exponent: 6, MarketDataID: "neutron"},
		{Denom: "uibcatom", Symbol: "ATOM", Name: "Cosmos Hub", Display: "atom", Exponent: 6, MarketDataID: "cosmos"},
		{Denom: "uibcusdc", Symbol: "USDC", Name: "USD Coin", Display: "usdc", Exponent: 6, MarketDataID: "usd-coin"},
		{Denom: "uusdc", Symbol: "USDC", Name: "USD Coin", Display: "usdc", Exponent: 6, MarketDataID: "usd-coin"},
	}
}

// Index indexes the whole recording into db through the real pipeline.
func Index(t testing.TB, db *bun.DB) config.Chain {
	t.Helper()
	cfg := Chain()
	return replaytest.Index(t, db, Dir(), cfg, neutron.NewAdapter(cfg.Bech32Prefix), LastHeight)
}

// Truth decodes truth/<name>.
func Truth(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), "truth", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

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
	Truth(t, "dex_pairs_liquidity.json", &truth)
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
