package perp_test

import (
	"math/big"
	"testing"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator/perp"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
)

// TestFundingTicksReproduceTheFundingIndex replays the recorded dYdX
// localnet's funding: for every perpetual, the index changes of the
// replayed ticks add up to the funding index the node reports at the last
// height (its genesis index is 0), over the recording's 8 funding ticks.
func TestFundingTicksReproduceTheFundingIndex(t *testing.T) {
	t.Parallel()
	db, ch := dydxtest.New(t)
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

// A perpetual the funding replay learns of only from a later state
// snapshot (listed after genesis): BTC-USD's genesis funding parameters and
// catalog row are removed and its ticks replayed again, first without it,
// then with its rows at height 300 (a snapshot). It gets exactly the ticks
// after 300, equal to those the genesis parameters gave; the other
// perpetuals keep theirs.
func TestFundingOfAPerpetualListedLater(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, ch, cfg := indexedLocalnet(t)
	ticks := func() []fundingTick { return fundingTicksOf(t, db, ch.ID, -1) }
	all := ticks()
	var want []fundingTick // the genesis replay without BTC-USD's ticks up to 300
	for _, x := range all {
		if x.Perpetual != 0 || x.Height > 300 {
			want = append(want, x)
		}
	}
	if len(want) != len(all)-5 {
		t.Fatalf("BTC-USD has %d ticks up to 300, want 5", len(all)-len(want))
	}

	exec := func(q string) {
		t.Helper()
		if _, err := db.NewRaw(q, ch.ID).Exec(ctx); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE saved_params AS SELECT * FROM dydx_funding_params WHERE chain_id = ?0 AND perpetual_id = 0`)
	exec(`CREATE TABLE saved_perp AS SELECT * FROM dydx_perpetuals WHERE chain_id = ?0 AND perpetual_id = 0`)
	exec(`DELETE FROM dydx_funding_params WHERE chain_id = ?0 AND perpetual_id = 0`)
	exec(`DELETE FROM dydx_perpetuals WHERE chain_id = ?0 AND perpetual_id = 0`)
	exec(`DELETE FROM perp_funding_ticks WHERE chain_id = ?0 AND perpetual_id = 0`)
	apitest.RunJobs(t, db, cfg)
	if got := ticks(); len(got) != len(all)-8 {
		t.Fatalf("without BTC-USD's parameters: %d ticks, want %d", len(got), len(all)-8)
	}

	exec(`INSERT INTO dydx_funding_params SELECT chain_id, 300, perpetual_id, default_funding_ppm, max_abs_rate_ppm, tick_seconds,
		sample_seconds, min_votes_per_sample FROM saved_params`)
	exec(`INSERT INTO dydx_perpetuals SELECT chain_id, 300, perpetual_id, ticker, market_id, atomic_resolution, market_type FROM saved_perp`)
	apitest.RunJobs(t, db, cfg)
	got := ticks()
	if len(got) != len(want) {
		t.Fatalf("after the snapshot: %d ticks, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("tick %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A change of funding parameters seen by a later state snapshot applies
// from its height on, also when the reports are rebuilt from scratch:
// BTC-USD's default funding becomes 30,000 ppm at height 300; its ticks up
// to 300 keep the genesis rates and index changes, the three after it use
// the new rate at the oracle price of their height.
func TestFundingParametersChangeAtTheirHeight(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, ch, cfg := indexedLocalnet(t)
	btc := func() []fundingTick { return fundingTicksOf(t, db, ch.ID, 0) }
	before := btc()
	if len(before) != 8 {
		t.Fatalf("BTC-USD: %d ticks", len(before))
	}
	for _, q := range []string{
		`INSERT INTO dydx_funding_params SELECT chain_id, 300, perpetual_id, 30000, max_abs_rate_ppm, tick_seconds, sample_seconds,
			min_votes_per_sample FROM dydx_funding_params WHERE chain_id = ?0 AND perpetual_id = 0`,
		`UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'perp_funding_ticks'`, // a rebuild recomputes every tick
	} {
		if _, err := db.NewRaw(q, ch.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	apitest.RunJobs(t, db, cfg)
	after := btc()
	if len(after) != 8 {
		t.Fatalf("BTC-USD after the change: %d ticks", len(after))
	}
	for i, x := range after {
		if x.Height < 300 {
			if x != before[i] {
				t.Errorf("tick %d before the change: %+v, was %+v", x.Height, x, before[i])
			}
			continue
		}
		var price string
		var exponent int64
		if err := db.NewRaw(`SELECT (SELECT price::text FROM dydx_prices WHERE chain_id = ?0 AND market_id = 0 AND height <= ?1 ORDER BY height DESC LIMIT 1),
			(SELECT exponent FROM dydx_markets WHERE chain_id = ?0 AND market_id = 0 ORDER BY height DESC LIMIT 1)`, ch.ID, x.Height).
			Scan(ctx, &price, &exponent); err != nil {
			t.Fatal(err)
		}
		px, _ := new(big.Int).SetString(price, 10)
		want := perp.FundingIndexDelta(60, 30000, px, exponent, -10).String()
		if x.Rate != 30000 || x.Delta != want || want == before[i].Delta {
			t.Errorf("tick %d after the change: %+v, want rate 30000 and index change %s (was %s)", x.Height, x, want, before[i].Delta)
		}
	}
}

// fundingTick is one row of perp_funding_ticks.
type fundingTick struct {
	Perpetual int64  `bun:"perpetual_id"`
	Height    int64  `bun:"height"`
	Rate      int64  `bun:"rate_ppm"`
	Delta     string `bun:"delta"`
}

// indexedLocalnet indexes the recorded localnet and runs the jobs once.
func indexedLocalnet(t *testing.T) (*bun.DB, config.Chain, *config.Config) {
	t.Helper()
	db, ch := dydxtest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	apitest.RunJobs(t, db, cfg)
	return db, ch, cfg
}

// fundingTicksOf reads the chain's funding ticks, of every perpetual when
// perpetual is negative, ordered by perpetual and height.
func fundingTicksOf(t *testing.T, db *bun.DB, chainID string, perpetual int64) []fundingTick {
	t.Helper()
	var out []fundingTick
	if err := db.NewRaw(`SELECT perpetual_id, height, rate_ppm, index_delta::text AS delta FROM perp_funding_ticks
		WHERE chain_id = ? AND (? < 0 OR perpetual_id = ?) ORDER BY perpetual_id, height`, chainID, perpetual, perpetual).Scan(t.Context(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
