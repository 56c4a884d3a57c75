package perp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// TestActivityDistributions answers the activity endpoints from report rows
// written by hand, where every split is known: five traders, one of whom
// (C) started in an earlier week and one (E) the week before, over three
// hours of Monday 2026-03-02.
func TestActivityDistributions(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	const chain = "synth-dydx"
	tip := time.Date(2026, 3, 2, 3, 59, 0, 0, time.UTC)
	if err := store.EnsurePartitions(ctx, db, []string{"blocks"}, 10, 10); err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	first := map[string]string{
		"A": "2026-03-02 01:10:00", "B": "2026-03-02 01:30:00", "C": "2026-02-20 10:00:00",
		"D": "2026-03-02 03:05:00", "E": "2026-02-23 08:00:00",
	}
	hours := []struct {
		addr, hour string
		fills      int
	}{
		{"A", "2026-03-02 01:00:00", 3}, {"A", "2026-03-02 03:00:00", 12}, {"B", "2026-03-02 01:00:00", 1},
		{"C", "2026-02-20 10:00:00", 1}, {"C", "2026-03-02 02:00:00", 100}, {"D", "2026-03-02 03:00:00", 1},
		{"E", "2026-02-23 08:00:00", 2}, {"E", "2026-03-02 02:00:00", 1},
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("INSERT INTO blocks (chain_id, height, hash, time, proposer, app_hash, num_txs) VALUES (?, 10, 'h', ?, 'p', 'a', 0)", chain, tip)
	exec("INSERT INTO aggregator_jobs (name, watermark) VALUES ('perp_trading', 10)")
	for a, f := range first {
		exec("INSERT INTO perp_traders (chain_id, address, all_time_trades, first_fill_at, last_fill_at) VALUES (?, ?, 1, ?, ?)", chain, a, at(f), at(f))
	}
	for _, h := range hours {
		exec("INSERT INTO perp_trader_hourly (chain_id, hour, address, fills) VALUES (?, ?, ?, ?)", chain, at(h.hour), h.addr, h.fills)
	}
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

	var rr []map[string]any
	s.getJSON(t, "/activity/retention_rate?start_date=2026-02-16", &rr)
	if got, want := fmt.Sprint(rr), fmt.Sprint([]map[string]any{
		{"labels": "2026-02-16 00:00:00", "new_users": 1, "week1": 0, "week2": 100, "week3": 0, "week4": 0},
		{"labels": "2026-02-23 00:00:00", "new_users": 1, "week1": 100, "week2": 0, "week3": 0, "week4": 0},
		{"labels": "2026-03-02 00:00:00", "new_users": 3, "week1": 0, "week2": 0, "week3": 0, "week4": 0},
	}); got != want {
		t.Errorf("retention\n%s\nwant\n%s", got, want)
	}
}
