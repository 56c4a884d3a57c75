package dex_test

import (
	"context"
	"log/slog"
	"reflect"
	"testing"

	report "github.com/chainlens/chainlens/report/dex"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestCandlesAndActivityIncremental spreads the localnet over three days
// (block h at h × 10 minutes after 2026-11-21 00:00), runs the jobs at
// growing indexed tips, and compares every row dex_candles and dex_activity
// wrote with one run from scratch.
func TestCandlesAndActivityIncremental(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := testdb.New(t)
	m := report.NewMarket(osmosistest.Index(t, db))
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("UPDATE blocks SET time = '2026-11-21T00:00:00Z'::timestamptz + height * interval '10 minutes'")
	exec("UPDATE osmosis_swaps SET time = '2026-11-21T00:00:00Z'::timestamptz + height * interval '10 minutes'")
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil,
		dex.Prices{Market: m}, dex.Volume{Market: m}, dex.Candles{Market: m}, dex.Activity{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	for _, tip := range []int64{10, 18, 50, 75, 100, 144, 150, 200, 230, 260, 299} {
		exec("UPDATE sync_state SET next_height = ?", tip+1)
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{assetBarsQ, pairBarsQ,
		`SELECT address AS key, 0 AS tf, day AS bucket, swaps::text AS open, trading_usd::text AS high, lp_usd::text AS low,
			staking_usd::text AS close, '' AS sum FROM osmosis_wallet_daily ORDER BY address, day`,
		`SELECT pool_id::text AS key, 0 AS tf, day AS bucket, added_usd::text AS open, removed_usd::text AS high, '' AS low, '' AS close,
			'' AS sum FROM osmosis_pool_flow_daily ORDER BY pool_id, day`,
		// The kept week: upserted while its end day stays, rebuilt on a new day.
		`SELECT address AS key, 0 AS tf, (SELECT day FROM osmosis_wallet_7d_end) AS bucket, trading_usd::text AS open, lp_usd::text AS high,
			staking_usd::text AS low, total_usd::text AS close, '' AS sum FROM osmosis_wallet_7d ORDER BY address`}
	stepped := make([][]bar, len(queries))
	for i, q := range queries {
		stepped[i] = bars(t, db, q)
	}
	var days, hours int
	if err := db.NewRaw("SELECT count(DISTINCT bucket) FILTER (WHERE tf = 1440), count(DISTINCT bucket) FILTER (WHERE tf = 60) FROM osmosis_asset_candles").
		Scan(ctx, &days, &hours); err != nil || days != 3 || hours < 30 {
		t.Fatalf("bars over %d days and %d hours, want 3 days and many hours (%v)", days, hours, err)
	}

	exec(`DELETE FROM aggregator_jobs; DELETE FROM osmosis_asset_prices; DELETE FROM osmosis_asset_volume_hourly; DELETE FROM osmosis_pool_volume_hourly;
		DELETE FROM osmosis_pair_last_swaps; DELETE FROM osmosis_price_state; DELETE FROM osmosis_asset_candles; DELETE FROM osmosis_pair_candles;
		DELETE FROM osmosis_wallet_daily; DELETE FROM osmosis_pool_flow_daily; DELETE FROM osmosis_wallet_7d; DELETE FROM osmosis_wallet_7d_end`)
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for i, q := range queries {
		if once := bars(t, db, q); len(once) == 0 || !reflect.DeepEqual(stepped[i], once) {
			t.Errorf("%s\nstep by step: %d rows, at once: %d rows (or they differ)", q, len(stepped[i]), len(once))
		}
	}
}
