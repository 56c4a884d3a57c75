package perp_test

import (
	"math/big"
	"testing"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestFundingTicksReproduceTheFundingIndex replays the recorded dYdX
// localnet's funding: for every perpetual, the index changes of the
// replayed ticks add up to the funding index the node reports at the last
// height (its genesis index is 0), over the recording's 8 funding ticks.
func TestFundingTicksReproduceTheFundingIndex(t *testing.T) {
	db, _ := testdb.New(t)
	ch := dydxtest.Index(t, db)
	apitest.RunJobs(t, db, &config.Config{Chains: []config.Chain{ch}})

	var truth struct {
		Perpetual []struct {
			Params struct {
				ID      int64 `json:"id"`
				Default int64 `json:"default_funding_ppm"`
			} `json:"params"`
			FundingIndex string `json:"funding_index"`
		} `json:"perpetual"`
	}
	dydxtest.Truth(t, "perpetuals.json", &truth)
	if len(truth.Perpetual) < 30 {
		t.Fatalf("truth: %d perpetuals", len(truth.Perpetual))
	}
	var got []struct {
		Perpetual int64  `bun:"perpetual_id"`
		Ticks     int64  `bun:"ticks"`
		Index     string `bun:"idx"`
		MinRate   int64  `bun:"min_rate"`
		MaxRate   int64  `bun:"max_rate"`
	}
	if err := db.NewRaw(`SELECT perpetual_id, count(*) AS ticks, sum(index_delta)::text AS idx, min(rate_ppm) AS min_rate, max(rate_ppm) AS max_rate
		FROM perp_funding_ticks WHERE chain_id = ? GROUP BY perpetual_id ORDER BY perpetual_id`, ch.ID).Scan(t.Context(), &got); err != nil {
		t.Fatal(err)
	}
	byID := map[int64]int{}
	for i, g := range got {
		byID[g.Perpetual] = i
	}
	nonZero := 0
	for _, p := range truth.Perpetual {
		i, ok := byID[p.Params.ID]
		if !ok {
			t.Errorf("perpetual %d: no funding ticks", p.Params.ID)
			continue
		}
		g := got[i]
		want, _ := new(big.Int).SetString(p.FundingIndex, 10)
		if have, _ := new(big.Int).SetString(g.Index, 10); have == nil || have.Cmp(want) != 0 {
			t.Errorf("perpetual %d: Σ index deltas %s, node's funding index %s", p.Params.ID, g.Index, p.FundingIndex)
		}
		if want.Sign() != 0 {
			nonZero++
		}
		// Every rate is the default but BTC-USD's fourth (below).
		if g.Ticks != 8 || g.MinRate != p.Params.Default || (g.MaxRate != p.Params.Default && p.Params.ID != 0) {
			t.Errorf("perpetual %d: %d ticks, rates %d..%d, want 8 at %d", p.Params.ID, g.Ticks, g.MinRate, g.MaxRate, p.Params.Default)
		}
	}
	// BTC-USD: the proposer voted a premium of 556 ppm at heights 186 and
	// 187 only. The sample epoch holding them had 4 vote messages, so its
	// sample is the median of [0 0 556 556] = 278; the tick at 233 averages
	// it with 11 zero samples (60 s ÷ 5 s = 12 expected): premium 23, rate
	// 20,023 ppm. Index deltas follow the oracle price (BTC moved down at 184).
	var btc []struct {
		Height  int64  `bun:"height"`
		Rate    int64  `bun:"rate_ppm"`
		Premium int64  `bun:"premium_ppm"`
		Delta   string `bun:"delta"`
	}
	if err := db.NewRaw(`SELECT height, rate_ppm, premium_ppm, index_delta::text AS delta FROM perp_funding_ticks
		WHERE chain_id = ? AND perpetual_id = 0 ORDER BY height`, ch.ID).Scan(t.Context(), &btc); err != nil {
		t.Fatal(err)
	}
	wantBTC := []struct {
		height, rate, premium int64
		delta                 string
	}{{56, 20000, 0, "119"}, {115, 20000, 0, "119"}, {174, 20000, 0, "119"}, {233, 20023, 23, "117"},
		{292, 20000, 0, "117"}, {351, 20000, 0, "117"}, {410, 20000, 0, "117"}, {469, 20000, 0, "117"}}
	if len(btc) != len(wantBTC) {
		t.Fatalf("BTC-USD ticks: %+v", btc)
	}
	for i, w := range wantBTC {
		if g := btc[i]; g.Height != w.height || g.Rate != w.rate || g.Premium != w.premium || g.Delta != w.delta {
			t.Errorf("BTC-USD tick %d: %+v, want %+v", i, g, w)
		}
	}
	if nonZero < 3 {
		t.Errorf("only %d perpetuals with a non-zero funding index: the check proves little", nonZero)
	}
	// A rerun adds nothing.
	apitest.RunJobs(t, db, &config.Config{Chains: []config.Chain{ch}})
	var n int
	if err := db.NewRaw("SELECT count(*) FROM perp_funding_ticks WHERE chain_id = ?", ch.ID).Scan(t.Context(), &n); err != nil || n != 8*len(truth.Perpetual) {
		t.Errorf("%d tick rows after a rerun, want %d (%v)", n, 8*len(truth.Perpetual), err)
	}
}
