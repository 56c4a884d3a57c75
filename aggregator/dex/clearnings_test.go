package dex_test

import (
	"context"
	"math/big"
	"math/rand"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
	report "github.com/chainlens/chainlens/report/dex"
)

// TestCLEarnedPerLiquidity: what the dex_cl_earnings job keeps, summed by
// report.EarnedFrom for a range, is within a unit of 10^-80 USD per hour of
// the exact sum of the window's hours whose tick (the pool's last state at
// or before the hour) is in the range, each hour's earnings over that
// state's liquidity; and it gives the exact sum's 18 decimals, as an answer
// shows it (times a large liquidity, annualised). Random hours of three
// pools: states only in some hours, none before the first, liquidity 0 in
// some, zero sources, ranges in and out of the ticks, windows that start
// inside the hours. Pools that are not concentrated are left out.
func TestCLEarnedPerLiquidity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := testdb.New(t)
	m := report.NewMarket(osmosistest.Index(t, db))
	rng := rand.New(rand.NewSource(8))
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.NewRaw(q, args...).Exec(ctx); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var start time.Time
	if err := db.NewRaw("SELECT max(time) FROM blocks WHERE chain_id = ?", m.ChainID).Scan(ctx, &start); err != nil {
		t.Fatal(err)
	}
	start = start.UTC().Truncate(time.Hour).Add(time.Hour)
	dec := func(digits int) *big.Rat { // a numeric of 18 decimals
		n := new(big.Int).Rand(rng, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil))
		return new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	}
	type hour struct {
		at     time.Time
		src    [3]*big.Rat
		tick   int64
		active *big.Rat // nil: no state yet
	}
	pools := map[int64][]hour{}
	for _, pool := range []int64{9001, 9002, 9003} {
		if pool != 9003 {
			exec("INSERT INTO osmosis_cl_pools (chain_id, pool_id, tick_spacing, incentives_address) VALUES (?, ?, 100, 'x')", m.ChainID, pool)
		}
		var tick int64
		var active *big.Rat
		for h := range 168 {
			at := start.Add(time.Duration(h) * time.Hour)
			if h > 3 && rng.Intn(3) > 0 { // a new state at the hour's end
				tick, active = int64(rng.Intn(2000)-1000), dec(20+rng.Intn(20))
				if rng.Intn(12) == 0 {
					active = new(big.Rat)
				}
				exec("INSERT INTO osmosis_cl_state_hourly (chain_id, pool_id, hour, sqrt_price, tick, liquidity) VALUES (?, ?, ?, 1, ?, ?)",
					m.ChainID, pool, at, tick, active.FloatString(18))
			}
			if rng.Intn(9) == 0 {
				continue // no earnings row this hour
			}
			src := [3]*big.Rat{dec(18 + rng.Intn(8)), new(big.Rat), dec(10 + rng.Intn(20))}
			if rng.Intn(3) == 0 {
				src[0] = new(big.Rat)
			}
			exec("INSERT INTO "+report.PoolRewards+" (chain_id, pool_id, hour, fees_usd, native_usd, boost_usd, superfluid_usd) VALUES (?, ?, ?, ?, ?, ?, 0)",
				m.ChainID, pool, at, src[0].FloatString(18), src[1].FloatString(18), src[2].FloatString(18))
			pools[pool] = append(pools[pool], hour{at, src, tick, active})
		}
	}
	var tip int64
	if err := db.NewRaw("SELECT max(height) FROM blocks WHERE chain_id = ?", m.ChainID).Scan(ctx, &tip); err != nil {
		t.Fatal(err)
	}
	if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		_, _, err := dex.CLEarnings{Market: m}.Run(ctx, tx, 0, tip)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	scale := new(big.Rat).Mul(big.NewRat(365*24*3600*100, 3600), big.NewRat(1_000_000_000_000, 1))
	checked := 0
	for _, from := range []time.Time{start.Add(-time.Hour), start.Add(30*time.Hour + 17*time.Minute), start.Add(160 * time.Hour)} {
		var ranges []report.Range
		for _, pool := range []int64{9001, 9002, 9003} {
			for _, r := range [][2]int64{{-887272, 887272}, {-500, 700}, {0, 1}, {999, 1000}, {-1000, -999}} {
				ranges = append(ranges, report.Range{Pool: pool, Lower: r[0], Upper: r[1]})
			}
		}
		got, err := report.EarnedFrom(ctx, db, m.ChainID, from, ranges)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range ranges {
			var want [3]*big.Rat
			for k := range want {
				want[k] = new(big.Rat)
			}
			in := 0
			for _, h := range pools[r.Pool] {
				if r.Pool == 9003 || h.at.Before(from.Truncate(time.Hour)) || h.active == nil || h.active.Sign() <= 0 || h.tick < r.Lower || h.tick >= r.Upper {
					continue
				}
				in++
				for k := range want {
					want[k].Add(want[k], new(big.Rat).Quo(h.src[k], h.active))
				}
			}
			bound := new(big.Rat).SetFrac(big.NewInt(int64(in)), report.EarnedUnit)
			for k, text := range []string{got[i].Fees, got[i].Native, got[i].Boost} {
				n, ok := new(big.Int).SetString(text, 10)
				if !ok {
					t.Fatalf("range %+v source %d: %q", r, k, text)
				}
				g := new(big.Rat).SetFrac(n, report.EarnedUnit)
				diff := new(big.Rat).Sub(want[k], g)
				if diff.Sign() < 0 || diff.Cmp(bound) > 0 {
					t.Fatalf("from %s range %+v source %d: %s short of the exact sum, bound %s", from, r, k, diff.FloatString(90), bound.FloatString(90))
				}
				if gs, ws := new(big.Rat).Mul(g, scale).FloatString(18), new(big.Rat).Mul(want[k], scale).FloatString(18); gs != ws {
					t.Fatalf("from %s range %+v source %d: %s, exactly %s", from, r, k, gs, ws)
				}
				if want[k].Sign() > 0 {
					checked++
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("%d nonzero sums checked: the ranges miss the hours", checked)
	}
}
