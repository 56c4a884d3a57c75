package dex_test

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"slices"
	"testing"
	"time"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/store/snapshots"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	report "github.com/chainlens/chainlens/report/dex"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestRewardsJobsIncremental spreads the localnet over three days (block h
// at h × 10 minutes after 2026-11-21 00:00) with a staking pool snapshot at
// 150 (stored late), runs the staking, pool rewards, rewards received, LP holdings,
// liquidity, portfolio, revenue, concentrated pools' state and earnings jobs at growing indexed tips, and
// compares every row they wrote with one run from scratch: each run's
// reads bounded by height from its first hour or day, and its latest
// rows before that hour, give what one run over everything gives.
func TestRewardsJobsIncremental(t *testing.T) {
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
	var at150 time.Time
	if err := db.NewRaw("SELECT time FROM blocks WHERE height = 150").Scan(ctx, &at150); err != nil {
		t.Fatal(err)
	}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil,
		dex.Prices{Market: m}, dex.Volume{Market: m}, dex.Staking{Market: m}, dex.PoolRewards{Market: m},
		dex.RewardsReceived{Market: m}, dex.LPHoldings{Market: m}, dex.Liquidity{Market: m}, dex.Portfolio{Market: m}, dex.Revenue{Market: m},
		dex.CLState{Market: m}, dex.CLEarnings{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	for _, tip := range []int64{10, 18, 50, 75, 100, 144, 150, 200, 230, 260, 290, 299} {
		if tip == 299 {
			// The snapshot at 150 (the second day) is stored late, as a backfill
			// stores it, when the run no longer rewrites that day: it
			// gives that day its bonded tokens all the same.
			if err := snapshots.Store(ctx, db, m.ChainID, 150, at150, []snapshots.Row{
				{Kind: snapshots.KindStakingPool, Key: "bonded", Denom: "uosmo", Amount: "10002313583296"},
				{Kind: snapshots.KindTaken, Key: snapshots.KindStakingPool, Data: json.RawMessage(`{"rows":1}`)},
			}); err != nil {
				t.Fatal(err)
			}
		}
		exec("UPDATE sync_state SET next_height = ?", tip+1)
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{
		`SELECT '' AS key, 0 AS tf, day AS bucket, rewards::text AS open, commission::text AS high, seconds::text AS low,
			coalesce(bonded::text, 'null') AS close, coalesce(snapshot_height::text, '') AS sum FROM osmosis_staking_daily ORDER BY day`,
		`SELECT pool_id::text AS key, 0 AS tf, hour AS bucket, fees_usd::text AS open, native_usd::text AS high, boost_usd::text AS low,
			superfluid_usd::text AS close, '' AS sum FROM osmosis_pool_rewards_hourly ORDER BY pool_id, hour`,
		`SELECT address || ' ' || denom || ' ' || source AS key, 0 AS tf, day AS bucket, amount::text AS open, '' AS high, '' AS low,
			'' AS close, '' AS sum FROM osmosis_rewards_received_daily ORDER BY address, denom, source, day`,
		`SELECT address || ' ' || pool_id AS key, 0 AS tf, '2026-01-01'::timestamptz AS bucket, shares::text AS open, '' AS high, '' AS low,
			'' AS close, '' AS sum FROM osmosis_lp_holdings ORDER BY address, pool_id`,
		`SELECT pool_id::text AS key, 0 AS tf, '2026-01-01'::timestamptz AS bucket, total::text AS open, '' AS high, '' AS low,
			'' AS close, '' AS sum FROM osmosis_pool_shares ORDER BY pool_id`,
		`SELECT position_id::text || ' ' || address AS key, 0 AS tf, '2026-01-01'::timestamptz AS bucket, liquidity::text AS open,
			lower_tick::text AS high, upper_tick::text AS low, pool_id::text AS close, '' AS sum FROM osmosis_cl_open_positions ORDER BY position_id`,
		`SELECT lock_id::text || ' ' || owner AS key, 0 AS tf, '2026-01-01'::timestamptz AS bucket, shares::text AS open, denom AS high,
			validator AS low, '' AS close, '' AS sum FROM osmosis_superfluid_locks ORDER BY lock_id`,
		`SELECT pool_id || ' ' || denom AS key, 0 AS tf, hour AS bucket, amount::text AS open, '' AS high, '' AS low, '' AS close, '' AS sum
			FROM osmosis_pool_reserves_hourly ORDER BY pool_id, denom, hour`,
		`SELECT pool_id::text AS key, 0 AS tf, day AS bucket, liquidity_usd::text AS open, '' AS high, '' AS low, '' AS close, '' AS sum
			FROM osmosis_pool_liquidity_daily ORDER BY pool_id, day`,
		`SELECT pool_id::text AS key, 0 AS tf, hour AS bucket, liquidity_usd::text AS open, '' AS high, '' AS low, '' AS close, '' AS sum
			FROM osmosis_pool_liquidity_hourly ORDER BY pool_id, hour`,
		`SELECT denom AS key, 0 AS tf, hour AS bucket, coalesce(price_usd::text, 'null') AS open, coalesce(reserves::text, 'null') AS high,
			'' AS low, '' AS close, '' AS sum FROM osmosis_asset_state_hourly ORDER BY denom, hour`,
		`SELECT pool_id::text AS key, 0 AS tf, hour AS bucket, fees::text AS open, native::text AS high, boost::text AS low, tick::text AS close,
			'' AS sum FROM osmosis_cl_earnings_hourly ORDER BY pool_id, hour`,
		`SELECT pool_id::text AS key, 0 AS tf, day AS bucket, fees_usd::text AS open, native_usd::text AS high, boost_usd::text AS low,
			superfluid_usd::text AS close, '' AS sum FROM osmosis_pool_rewards_daily ORDER BY pool_id, day`,
		`SELECT address || ' ' || denom AS key, 0 AS tf, hour AS bucket, amount::text AS open, '' AS high, '' AS low, '' AS close, '' AS sum
			FROM osmosis_balances_hourly ORDER BY address, denom, hour`,
		`SELECT pool_id::text AS key, 0 AS tf, hour AS bucket, total_shares::text AS open, '' AS high, '' AS low, '' AS close, '' AS sum
			FROM osmosis_pool_shares_hourly ORDER BY pool_id, hour`,
		`SELECT position_id || ' ' || address AS key, 0 AS tf, hour AS bucket, liquidity::text AS open, lower_tick::text AS high,
			upper_tick::text AS low, pool_id::text AS close, '' AS sum FROM osmosis_cl_position_liquidity_hourly ORDER BY position_id, hour`,
		`SELECT source AS key, 0 AS tf, day AS bucket, amount_usd::text AS open, '' AS high, '' AS low, '' AS close, '' AS sum
			FROM osmosis_revenue_daily ORDER BY source, day`,
		// May be empty: the localnet locks nothing.
		`SELECT address || ' ' || denom AS key, 0 AS tf, hour AS bucket, amount::text AS open, '' AS high, '' AS low, '' AS close, '' AS sum
			FROM osmosis_locked_hourly ORDER BY address, denom, hour`,
		`SELECT '' AS key, 0 AS tf, hour AS bucket, payments::text AS open, '' AS high, '' AS low, '' AS close, '' AS sum
			FROM osmosis_lock_rewards_hourly ORDER BY hour`,
	}
	const mayBeEmpty = 2 // the last queries
	stepped := make([][]bar, len(queries))
	for i, q := range queries {
		stepped[i] = bars(t, db, q)
	}
	// Three days of staking rows, the first without a snapshot old enough.
	if len(stepped[0]) != 3 || stepped[0][0].Close != "null" || stepped[0][1].Sum != "150" || stepped[0][2].Sum != "150" {
		t.Errorf("staking days %+v", stepped[0])
	}

	exec(`DELETE FROM aggregator_jobs; DELETE FROM osmosis_asset_prices; DELETE FROM osmosis_asset_volume_hourly; DELETE FROM osmosis_pool_volume_hourly;
		DELETE FROM osmosis_pair_last_swaps; DELETE FROM osmosis_price_state; DELETE FROM osmosis_staking_daily; DELETE FROM osmosis_pool_rewards_hourly;
		DELETE FROM osmosis_cl_pools; DELETE FROM osmosis_superfluid_assets; DELETE FROM osmosis_superfluid_locks;
		DELETE FROM osmosis_superfluid_intermediaries; DELETE FROM osmosis_lock_rewards_hourly; DELETE FROM osmosis_rewards_received_daily;
		DELETE FROM osmosis_lp_holdings; DELETE FROM osmosis_pool_shares; DELETE FROM osmosis_cl_open_positions;
		DELETE FROM osmosis_pool_reserves_hourly; DELETE FROM osmosis_pool_liquidity_daily; DELETE FROM osmosis_balances_hourly;
		DELETE FROM osmosis_pool_liquidity_hourly; DELETE FROM osmosis_pool_rewards_daily; DELETE FROM osmosis_asset_state_hourly;
		DELETE FROM osmosis_cl_earnings_hourly; DELETE FROM osmosis_cl_state_hourly; DELETE FROM osmosis_cl_tick_changes; DELETE FROM osmosis_cl_tick_base;
		DELETE FROM osmosis_cl_tick_base_hour;
		DELETE FROM osmosis_locked_hourly; DELETE FROM osmosis_pool_shares_hourly; DELETE FROM osmosis_cl_position_liquidity_hourly;
		DELETE FROM osmosis_revenue_daily`)
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for i, q := range queries {
		once := bars(t, db, q)
		if (len(once) == 0 && i < len(queries)-mayBeEmpty) || !reflect.DeepEqual(stepped[i], once) {
			t.Errorf("%s\nstep by step: %d rows, at once: %d rows (or they differ)", q, len(stepped[i]), len(once))
		}
	}
	checkPoolLiquidityAt(t, db, m)
	checkAssetStatesAt(t, db, m)
}

// checkAssetStatesAt: report.AssetStatesAt (the job's hourly rows) is at
// every time what its definition gives: each denom's price at or before
// it (report.PricesAt) and its reserves summed over the catalog's (pool,
// denom) keys with a row at or before it, for every denom, and for one.
func checkAssetStatesAt(t *testing.T, db *bun.DB, m report.Market) {
	t.Helper()
	ctx := context.Background()
	ts := timesAcross(t, db, m)
	for _, only := range [][]string{nil, {"uatom"}} {
		got, err := report.AssetStatesAt(ctx, db, m.ChainID, ts, only)
		if err != nil {
			t.Fatal(err)
		}
		prices, err := report.PricesAt(ctx, db, m.ChainID, ts)
		if err != nil {
			t.Fatal(err)
		}
		var pooled []struct {
			I      int    `bun:"i"`
			Denom  string `bun:"denom"`
			Amount string `bun:"amount"`
		}
		if err := db.NewRaw(`SELECT t.i - 1 AS i, r.denom, sum(r.amount)::text AS amount
			FROM unnest(?1::timestamptz[]) WITH ORDINALITY t(at, i)
			CROSS JOIN (SELECT DISTINCT pool_id, unnest(denoms) AS denom FROM osmosis_known_pools WHERE chain_id = ?0) pd
			JOIN LATERAL (SELECT amount, denom FROM osmosis_pool_reserves_hourly r WHERE r.chain_id = ?0 AND r.pool_id = pd.pool_id
				AND r.denom = pd.denom AND r.hour <= t.at ORDER BY r.hour DESC LIMIT 1) r ON true
			GROUP BY 1, 2`, m.ChainID, pgdialect.Array(ts)).Scan(ctx, &pooled); err != nil {
			t.Fatal(err)
		}
		type key struct {
			i     int
			denom string
		}
		want := map[key]*report.AssetState{}
		state := func(i int, d string) *report.AssetState {
			k := key{i, d}
			if want[k] == nil {
				want[k] = &report.AssetState{I: i, Denom: d}
			}
			return want[k]
		}
		keep := func(d string) bool { return only == nil || slices.Contains(only, d) }
		for _, p := range prices {
			if keep(p.Denom) {
				state(p.I, p.Denom).PriceUSD = p.USD
			}
		}
		for _, r := range pooled {
			if keep(r.Denom) {
				state(r.I, r.Denom).Reserves = r.Amount
			}
		}
		var wantRows []report.AssetState
		for _, s := range want {
			wantRows = append(wantRows, *s)
		}
		slices.SortFunc(wantRows, func(a, b report.AssetState) int { return cmp.Or(cmp.Compare(a.I, b.I), cmp.Compare(a.Denom, b.Denom)) })
		priced, held := 0, 0
		for _, w := range wantRows {
			if w.PriceUSD != "" {
				priced++
			}
			if w.Reserves != "" {
				held++
			}
		}
		if priced == 0 || held == 0 || !reflect.DeepEqual(got, wantRows) {
			t.Errorf("AssetStatesAt(%v): %d rows, the definition %d (%d priced, %d pooled; or they differ)\n got %v\nwant %v",
				only, len(got), len(wantRows), priced, held, got, wantRows)
		}
	}
}

// checkPoolLiquidityAt: report.PoolLiquidityAt (the job's hourly rows) is
// at every time — on and off the hour, before the first reserve, after the
// last block — the liquidity its definition gives from the reserves and
// prices at that time (report.ReservesAt, report.PricesAt,
// Market.PoolLiquidity).
func checkPoolLiquidityAt(t *testing.T, db *bun.DB, m report.Market) {
	t.Helper()
	ctx := context.Background()
	ts := timesAcross(t, db, m)
	got, err := report.PoolLiquidityAt(ctx, db, m.ChainID, ts)
	if err != nil {
		t.Fatal(err)
	}
	reserves, err := report.ReservesAt(ctx, db, m.ChainID, ts)
	if err != nil {
		t.Fatal(err)
	}
	prices, err := report.PricesAt(ctx, db, m.ChainID, ts)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		i    int
		pool int64
	}
	held := map[key]map[string]math.Int{}
	priced := make([]map[string]math.LegacyDec, len(ts))
	for i := range priced {
		priced[i] = map[string]math.LegacyDec{}
	}
	for _, p := range prices {
		priced[p.I][p.Denom] = math.LegacyMustNewDecFromStr(p.USD)
	}
	for _, r := range reserves {
		k := key{r.I, r.PoolID}
		if held[k] == nil {
			held[k] = map[string]math.Int{}
		}
		amt, ok := math.NewIntFromString(r.Amount)
		if !ok {
			t.Fatalf("reserve %q", r.Amount)
		}
		held[k][r.Denom] = amt
	}
	var want []report.LiquidityAt
	for k, rs := range held {
		want = append(want, report.LiquidityAt{I: k.i, PoolID: k.pool, USD: m.PoolLiquidity(rs, priced[k.i]).String()})
	}
	slices.SortFunc(want, func(a, b report.LiquidityAt) int {
		return cmp.Or(cmp.Compare(a.I, b.I), cmp.Compare(a.PoolID, b.PoolID))
	})
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("PoolLiquidityAt: %d rows, the definition %d (or they differ)\n got %v\nwant %v", len(got), len(want), got, want)
	}
	nonzero := 0
	for _, w := range want {
		if w.USD != "0.000000000000000000" {
			nonzero++
		}
	}
	if nonzero == 0 {
		t.Error("no pool has a liquidity: the check compares nothing")
	}
}

// timesAcross are times every 50 minutes from two hours before the chain's
// first block to three hours after its last: on and off the hour, before
// any row and after the last.
func timesAcross(t *testing.T, db *bun.DB, m report.Market) []time.Time {
	t.Helper()
	var first, last time.Time
	if err := db.NewRaw("SELECT min(time), max(time) FROM blocks WHERE chain_id = ?", m.ChainID).Scan(context.Background(), &first, &last); err != nil {
		t.Fatal(err)
	}
	var ts []time.Time
	for at := first.Add(-2 * time.Hour); at.Before(last.Add(3 * time.Hour)); at = at.Add(50 * time.Minute) {
		ts = append(ts, at.UTC())
	}
	return ts
}
