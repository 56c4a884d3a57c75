package perp_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// TestActivityDistributions answers the activity endpoints where every
// split is known: five traders, one of whom (C) started in an earlier
// week and one (E) the week before, over three hours of Monday
// 2026-03-02. The fills reach the jobs in runs of 7 heights, which split
// hours, days and weeks between runs.
func TestActivityDistributions(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	const chain = "synth-dydx"
	cfg := &config.Config{Chains: []config.Chain{{ID: chain, Kind: "dydx"}}}
	tip := time.Date(2026, 3, 2, 3, 59, 0, 0, time.UTC)
	dydxtest.IndexTrades(t, db, chain, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), tip, []dydxtest.Trades{
		dydxtest.TradesOf("C", "2026-02-20 10:00:00", 1), dydxtest.TradesOf("E", "2026-02-23 08:00:00", 2),
		dydxtest.TradesOf("A", "2026-03-02 01:10:00", 3), dydxtest.TradesOf("B", "2026-03-02 01:30:00", 1),
		dydxtest.TradesOf("C", "2026-03-02 02:00:00", 100), dydxtest.TradesOf("E", "2026-03-02 02:30:00", 1),
		dydxtest.TradesOf("D", "2026-03-02 03:05:00", 1), dydxtest.TradesOf("A", "2026-03-02 03:10:00", 12),
	}, 7, func() { apitest.RunJobs(t, db, cfg) })
	s := serve(t, db, &config.Config{Chains: []config.Chain{{ID: chain, Kind: "dydx"}}}, tip.Add(time.Hour))

	var ba []map[string]any
	s.getJSON(t, "/activity/user_distribution_by_activity?start_date=2026-03-02%2001:00:00&end_date=2026-03-02", &ba)
	if got, want := fmt.Sprint(ba), fmt.Sprint([]map[string]any{
		{"labels": "2026-03-02 01:00:00", "new_users": 2, "active_users": 0, "inactive_users": 2, "total_users": 4},
		{"labels": "2026-03-02 02:00:00", "new_users": 0, "active_users": 2, "inactive_users": 2, "total_users": 4},
		{"labels": "2026-03-02 03:00:00", "new_users": 1, "active_users": 1, "inactive_users": 3, "total_users": 5},
	}); got != want {
		t.Errorf("by activity\n%s\nwant\n%s", got, want)
	}
	s.getJSON(t, "/activity/user_distribution_by_activity?time_resolution=week&start_date=2026-02-23", &ba)
	if got, want := fmt.Sprint(ba), fmt.Sprint([]map[string]any{
		{"labels": "2026-02-23 00:00:00", "new_users": 1, "active_users": 0, "inactive_users": 1, "total_users": 2},
		{"labels": "2026-03-02 00:00:00", "new_users": 3, "active_users": 2, "inactive_users": 0, "total_users": 5},
	}); got != want {
		t.Errorf("by activity, weekly\n%s\nwant\n%s", got, want)
	}

	var bt []map[string]any
	s.getJSON(t, "/activity/user_distribution_by_trades?time_resolution=day&start_date=2026-03-02", &bt)
	if got, want := fmt.Sprint(bt), fmt.Sprint([]map[string]any{
		{"labels": "2026-03-02 00:00:00", "at_least_100": 1, "at_least_10": 2, "at_least_1": 5},
	}); got != want {
		t.Errorf("by trades\n%s\nwant\n%s", got, want)
	}
	s.getJSON(t, "/activity/user_distribution_by_trades?time_resolution=week&start_date=2026-02-16", &bt)
	if got, want := fmt.Sprint(bt), fmt.Sprint([]map[string]any{
		{"labels": "2026-02-16 00:00:00", "at_least_100": 0, "at_least_10": 0, "at_least_1": 1},
		{"labels": "2026-02-23 00:00:00", "at_least_100": 0, "at_least_10": 0, "at_least_1": 1},
		{"labels": "2026-03-02 00:00:00", "at_least_100": 1, "at_least_10": 2, "at_least_1": 5},
	}); got != want {
		t.Errorf("by trades, weekly\n%s\nwant\n%s", got, want)
	}
	s.getJSON(t, "/activity/user_distribution_by_trades?time_resolution=month&start_date=2026-02-01", &bt)
	if got, want := fmt.Sprint(bt), fmt.Sprint([]map[string]any{
		{"labels": "2026-02-01 00:00:00", "at_least_100": 0, "at_least_10": 0, "at_least_1": 2},
		{"labels": "2026-03-01 00:00:00", "at_least_100": 1, "at_least_10": 2, "at_least_1": 5},
	}); got != want {
		t.Errorf("by trades, monthly\n%s\nwant\n%s", got, want)
	}

	var rr []map[string]any
	s.getJSON(t, "/activity/retention_rate?start_date=2026-02-16", &rr)
	if got, want := fmt.Sprint(rr), fmt.Sprint([]map[string]any{
		{"labels": "2026-02-16 00:00:00", "new_users": 1, "week1": 0, "week2": 100, "week3": 0, "week4": 0},
		{"labels": "2026-02-23 00:00:00", "new_users": 1, "week1": 100, "week2": 0, "week3": 0, "week4": 0},
		{"labels": "2026-03-02 00:00:00", "new_users": 3, "week1": 0, "week2": 0, "week3": 0, "week4": 0},
	}); got != want {
		t.Errorf("retention\n%s\nwant\n%s", got, want)
	}

	var vo []map[string]any
	s.getJSON(t, "/trading/trading_volume_overview?start_date=2026-02-20&end_date=2026-03-02", &vo)
	var traders []string
	for _, d := range vo {
		traders = append(traders, fmt.Sprint(d["labels"], " ", d["unique_traders"]))
	}
	if got, want := strings.Join(traders, ", "), "2026-02-20 00:00:00 1, 2026-02-21 00:00:00 0, 2026-02-22 00:00:00 0, "+
		"2026-02-23 00:00:00 1, 2026-02-24 00:00:00 0, 2026-02-25 00:00:00 0, 2026-02-26 00:00:00 0, 2026-02-27 00:00:00 0, "+
		"2026-02-28 00:00:00 0, 2026-03-01 00:00:00 0, 2026-03-02 00:00:00 5"; got != want {
		t.Errorf("unique traders per day\n%s\nwant\n%s", got, want)
	}
}

// TestRetentionAcrossDST follows a cohort whose next week starts after a
// daylight-saving change in the database's time zone (Europe/Berlin,
// 2026-03-29): the week is still found (adding "7 days" to a timestamptz
// in that zone lands an hour before the UTC week start), and a fill late on
// the day of the change stays on its UTC day. Sessions are UTC
// (store.Open), so this guards that setting as much as the queries.
func TestRetentionAcrossDST(t *testing.T) {
	t.Parallel()
	base, url := testdb.New(t)
	ctx := context.Background()
	var name string
	if err := base.NewRaw("SELECT current_database()").Scan(ctx, &name); err != nil {
		t.Fatal(err)
	}
	if _, err := base.ExecContext(ctx, "ALTER DATABASE "+name+" SET timezone = 'Europe/Berlin'"); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, url, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const chain = "synth-dydx"
	cfg := &config.Config{Chains: []config.Chain{{ID: chain, Kind: "dydx"}}}
	tip := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	dydxtest.IndexTrades(t, db, chain, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), tip, []dydxtest.Trades{
		dydxtest.TradesOf("A", "2026-03-24 10:00:00", 1), dydxtest.TradesOf("A", "2026-03-29 23:30:00", 1), dydxtest.TradesOf("A", "2026-03-31 10:00:00", 1),
	}, 1, func() { apitest.RunJobs(t, db, cfg) })
	s := serve(t, db, &config.Config{Chains: []config.Chain{{ID: chain, Kind: "dydx"}}}, tip)
	var rr []map[string]any
	s.getJSON(t, "/activity/retention_rate?start_date=2026-03-23&end_date=2026-03-23", &rr)
	if got, want := fmt.Sprint(rr), fmt.Sprint([]map[string]any{
		{"labels": "2026-03-23 00:00:00", "new_users": 1, "week1": 100, "week2": 0, "week3": 0, "week4": 0},
	}); got != want {
		t.Errorf("retention in Europe/Berlin\n%s\nwant\n%s", got, want)
	}
	var bt []map[string]any
	s.getJSON(t, "/activity/user_distribution_by_trades?time_resolution=day&start_date=2026-03-29&end_date=2026-03-30", &bt)
	if got, want := fmt.Sprint(bt), fmt.Sprint([]map[string]any{
		{"labels": "2026-03-29 00:00:00", "at_least_100": 0, "at_least_10": 0, "at_least_1": 1},
		{"labels": "2026-03-30 00:00:00", "at_least_100": 0, "at_least_10": 0, "at_least_1": 0},
	}); got != want {
		t.Errorf("days around the change in Europe/Berlin\n%s\nwant\n%s", got, want)
	}
}

// TestDeadLetterHoldsTheReports: heights in dead_letters are not indexed
// yet, so the perp reports (positions replayed in order) stop before the
// first one and go on once it is indexed.
func TestDeadLetterHoldsTheReports(t *testing.T) {
	t.Parallel()
	db, ch := dydxtest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `INSERT INTO dead_letters (chain_id, height, attempts, last_error, next_retry_at)
		VALUES (?, 200, 1, 'test', now())`, ch.ID); err != nil {
		t.Fatal(err)
	}
	run := func() int64 {
		t.Helper()
		apitest.RunJobs(t, db, cfg)
		var wm int64
		if err := db.NewRaw("SELECT min(watermark) FROM aggregator_jobs WHERE starts_with(name, 'perp_')").Scan(ctx, &wm); err != nil {
			t.Fatal(err)
		}
		return wm
	}
	if wm := run(); wm != 199 {
		t.Fatalf("watermark %d with a dead letter at 200, want 199", wm)
	}
	var fills int64
	if err := db.NewRaw("SELECT coalesce(sum(fills), 0) FROM perp_market_hourly").Scan(ctx, &fills); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, m := range dydxtest.Matches(t) {
		if m.Height < 200 {
			want++
		}
	}
	if fills != want {
		t.Errorf("%d fills aggregated before height 200, want %d", fills, want)
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM dead_letters"); err != nil {
		t.Fatal(err)
	}
	if wm := run(); wm != dydxtest.LastHeight {
		t.Fatalf("watermark %d once the height is indexed, want %d", wm, dydxtest.LastHeight)
	}
}

// TestTradingRewards runs the perp jobs over hand-written chain rows
// (the localnet pays no trading rewards: its rewards treasury is empty):
// NATIVE sent by the rewards_treasury module account counts, other senders
// and other denoms do not; USD values use each day's last oracle price.
func TestTradingRewards(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	const chain = "synth-dydx"
	treasury, err := cosmos.ModuleAddress("dydx", "rewards_treasury")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.EnsurePartitions(ctx, db, chain, []string{"blocks", "transfers", "dydx_native_token", "dydx_markets", "dydx_prices", "staking_events"}, 0, 10); err != nil {
		t.Fatal(err)
	}
	community, err := cosmos.ModuleAddress("dydx", "community_treasury")
	if err != nil {
		t.Fatal(err)
	}
	vester, err := cosmos.ModuleAddress("dydx", "community_vester")
	if err != nil {
		t.Fatal(err)
	}
	// A validator: its operator address and its account share the bytes.
	operator, err := cosmos.ModuleAddress("dydxvaloper", "a-validator")
	if err != nil {
		t.Fatal(err)
	}
	validatorAccount, err := cosmos.ModuleAddress("dydx", "a-validator")
	if err != nil {
		t.Fatal(err)
	}
	// A validator created at height 3: a transfer to its account before
	// that is not to a validator.
	operator2, err := cosmos.ModuleAddress("dydxvaloper", "a-later-validator")
	if err != nil {
		t.Fatal(err)
	}
	laterAccount, err := cosmos.ModuleAddress("dydx", "a-later-validator")
	if err != nil {
		t.Fatal(err)
	}
	day1, day2 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	times := map[int64]time.Time{1: day1.Add(10 * time.Hour), 2: day2.Add(10 * time.Hour), 3: day2.Add(11 * time.Hour)}
	native := func(n float64) string { return new(big.Int).Mul(big.NewInt(int64(n*10)), big.NewInt(1e17)).String() }
	stmts := []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO sync_state (chain_id, kind, next_height) VALUES (?, 'dydx', 4)", []any{chain}},
		{"INSERT INTO dydx_native_token VALUES (?, 0, 'adv4tnt', 18, 11, 'ibc/USDC')", []any{chain}},
		{"INSERT INTO dydx_markets VALUES (?, 0, 11, 'DYDX-USD', -9)", []any{chain}},
		{"INSERT INTO staking_events VALUES (?, 1, 0, 0, 0, 0, 'create_validator', ?, ?, '', 'adv4tnt', 1)", []any{chain, validatorAccount, operator}},
		{"INSERT INTO staking_events VALUES (?, 3, 0, 0, 0, 0, 'create_validator', ?, ?, '', 'adv4tnt', 1)", []any{chain, laterAccount, operator2}},
		{"INSERT INTO dydx_prices VALUES (?, 0, 11, ?, 2000000000), (?, 2, 11, ?, 3000000000)", []any{chain, day1, chain, times[2]}},
	}
	for h, tm := range times {
		stmts = append(stmts, struct {
			sql  string
			args []any
		}{"INSERT INTO blocks VALUES (?, ?, 'h', ?, 'p', 'a', 0)", []any{chain, h, tm}})
	}
	for i, tr := range []struct {
		height           int64
		sender, to, deno string
		amount           string
	}{
		{1, treasury, "A", "adv4tnt", native(1.5)},
		{2, treasury, "A", "adv4tnt", native(1)},
		{2, treasury, "B", "adv4tnt", native(2)},
		{3, treasury, "B", "adv4tnt", native(0.5)},
		{3, "someone", "A", "adv4tnt", native(7)}, // not the rewards treasury
		{3, treasury, "A", "ibc/USDC", "1000000"}, // not NATIVE
		{2, community, validatorAccount, "adv4tnt", native(4)},
		{3, community, "C", "adv4tnt", native(1)},
		{2, community, laterAccount, "adv4tnt", native(2)}, // before its validator exists: other
		{3, vester, community, "adv4tnt", native(100)},     // between treasury accounts
		{3, treasury, community, "adv4tnt", native(50)},    // rewards treasury to another treasury account: no reward
	} {
		stmts = append(stmts, struct {
			sql  string
			args []any
		}{"INSERT INTO transfers VALUES (?, ?, -1, ?, 0, -1, 'transfer', ?, ?, ?, ?)", []any{chain, tr.height, i, tr.sender, tr.to, tr.deno, tr.amount}})
	}
	for _, st := range stmts {
		if _, err := db.ExecContext(ctx, st.sql, st.args...); err != nil {
			t.Fatalf("%s: %v", st.sql, err)
		}
	}
	cfg := &config.Config{Chains: []config.Chain{{ID: chain, Kind: "dydx", Bech32Prefix: "dydx"}},
		Perp: config.Perp{GrantRecipients: []string{"C"}}}
	apitest.RunJobs(t, db, cfg)
	s := serve(t, db, cfg, times[3].Add(time.Hour))
	for _, c := range []struct{ path, want string }{
		{"/total_rewards?start_date=2026-03-01&end_date=2026-03-02",
			`[{"labels":"2026-03-01 00:00:00","total_rewards":1.5,"increase":1.5},{"labels":"2026-03-02 00:00:00","total_rewards":5,"increase":3.5}]`},
		{"/total_rewards?unit=dollar&start_date=2026-03-01&end_date=2026-03-02",
			`[{"labels":"2026-03-01 00:00:00","total_rewards":3,"increase":3},{"labels":"2026-03-02 00:00:00","total_rewards":13.5,"increase":10.5}]`},
		{"/total_rewards?unit=token&start_date=2026-03-02&end_date=2026-03-02",
			`[{"labels":"2026-03-02 00:00:00","total_rewards":5,"increase":3.5}]`},
		{"/users_period_rewards?start_date=2026-03-01&end_date=2026-03-02", `[{"address":"A","rewards":2.5},{"address":"B","rewards":2.5}]`},
		{"/users_period_rewards?unit=dollar&start_date=2026-03-01&end_date=2026-03-02", `[{"address":"B","rewards":7.5},{"address":"A","rewards":6}]`},
		{"/users_period_rewards?start_date=2026-03-02&end_date=2026-03-02", `[{"address":"B","rewards":2.5},{"address":"A","rewards":1}]`},
		// Treasury outflows in USD: rewards (NATIVE and 1 USDC), 4 NATIVE to
		// the validator's account, 1 NATIVE to a grant recipient (C), 2 to the
		// later validator's account before it existed; the vester's move to
		// the treasury is not an outflow.
		{"/business/expenses_share_by_destination?destinations=trading_rewards,validators,other,grants,total&start_date=2026-03-01&end_date=2026-03-02",
			`[{"labels":"2026-03-01 00:00:00","trading_rewards":3,"validators":0,"other":0,"grants":0,"total":3},` +
				`{"labels":"2026-03-02 00:00:00","trading_rewards":11.5,"validators":12,"other":6,"grants":3,"total":32.5}]`},
		{"/business/pnl_summary?start_date=2026-03-01&end_date=2026-03-02",
			`[{"labels":"2026-03-01 00:00:00","revenue":0,"expenses":3,"pnl":-3},{"labels":"2026-03-02 00:00:00","revenue":0,"expenses":32.5,"pnl":-32.5}]`},
	} {
		var v any
		s.getJSON(t, c.path, &v)
		if _, body := s.get(t, c.path); strings.TrimSpace(string(body)) != c.want {
			t.Errorf("%s\n%s\nwant\n%s", c.path, body, c.want)
		}
	}

	// Without the native token's market in the catalog, NATIVE amounts are
	// still served; their USD values are 503, not 0.
	if _, err := db.ExecContext(ctx, "DELETE FROM dydx_markets WHERE market_id = 11"); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"/total_rewards?start_date=2026-03-01&end_date=2026-03-02":                          200,
		"/total_rewards?unit=dollar&start_date=2026-03-01&end_date=2026-03-02":              503,
		"/business/expenses_share_by_destination?start_date=2026-03-01&end_date=2026-03-02": 503,
	} {
		if resp, body := s.get(t, path); resp.StatusCode != want {
			t.Errorf("without market 11 in the catalog, %s: %d %s, want %d", path, resp.StatusCode, body, want)
		}
	}
}

// TestFiltersBeforeAnythingIsIndexed: a market or validator filter cannot
// be checked before the catalogs and reports exist; that is 503 (data not
// indexed yet), not a 400 naming a valid market.
func TestFiltersBeforeAnythingIsIndexed(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	now := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for name, cfg := range map[string]*config.Config{
		"dydx chain not indexed yet": {Chains: []config.Chain{{ID: "synth-dydx", Kind: "dydx", Bech32Prefix: "dydx"}}},
		"no dydx chain":              {},
	} {
		s := serve(t, db, cfg, now)
		for _, path := range []string{"/trading/funding_rate", "/liquidation/flow_by_market?market=BTC-USD", "/trading/open_interest?market=0",
			"/staking/share_by_validator?validators=dydxvaloper1q"} {
			if resp, body := s.get(t, path); resp.StatusCode != 503 {
				t.Errorf("%s, %s: %d %s, want 503", name, path, resp.StatusCode, body)
			}
		}
	}
}
