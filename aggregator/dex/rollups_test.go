package dex_test

import (
	"context"
	"log/slog"
	"reflect"
	"testing"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestRollupsIncremental spreads the localnet over three days (block h at
// h × 10 minutes after 2026-11-21 00:00, as TestCandlesAndActivityIncremental)
// and checks the roll-ups the dex_volume and dex_activity jobs keep, after
// every run at a growing tip and after one run from scratch:
// osmosis_pool_volume_daily and osmosis_asset_volume_daily are the daily
// sums of their hourly tables, osmosis_volume_daily_totals the sums of
// osmosis_pool_volume_daily per day and through each day, and osmosis_traders_30d counts the distinct
// swap senders of the 30 days ending each day. actions.md: every one of
// alice, bob, carol, dave, erin and frank swaps on day 1 (heights < 144)
// and day 2 (144..287); on day 3 (288..299) all but carol (heights 290,
// 291). On day 1 only, the protorev module account
// (osmo17qdmjdumw4xawam4g46gtwzle5rd4zwyfqvvza, chain-events.md) also sends
// the tx-level backrun hops of height 23. So the windows ending 2026-11-21
// .. 2026-12-20 count 7, the one ending 2026-12-21 counts 6 (days 2 and 3),
// the one ending 2026-12-22 counts 5 (day 3 only), and no later window has
// a trader.
func TestRollupsIncremental(t *testing.T) {
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
		dex.Prices{Market: m}, dex.Volume{Market: m}, dex.Activity{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	// Rows of a daily table that differ from the sums of its hourly table.
	mismatches := func() (n int) {
		t.Helper()
		if err := db.NewRaw(`SELECT
			(SELECT count(*) FROM (SELECT chain_id, pool_id, date_trunc('day', hour, 'UTC') AS day, sum(volume_usd) AS v
				FROM osmosis_pool_volume_hourly GROUP BY 1, 2, 3) h
				FULL JOIN osmosis_pool_volume_daily d USING (chain_id, pool_id, day) WHERE h.v IS DISTINCT FROM d.volume_usd)
			+ (SELECT count(*) FROM (SELECT chain_id, denom, date_trunc('day', hour, 'UTC') AS day, sum(volume_usd) AS v
				FROM osmosis_asset_volume_hourly GROUP BY 1, 2, 3) h
				FULL JOIN osmosis_asset_volume_daily d USING (chain_id, denom, day) WHERE h.v IS DISTINCT FROM d.volume_usd)
			+ (SELECT count(*) FROM (SELECT chain_id, day, sum(volume_usd) AS v,
					(SELECT sum(volume_usd) FROM osmosis_pool_volume_daily a WHERE a.chain_id = d.chain_id AND a.day <= d.day) AS cum
				FROM osmosis_pool_volume_daily d GROUP BY 1, 2) d
				FULL JOIN osmosis_volume_daily_totals t USING (chain_id, day)
				WHERE d.v IS DISTINCT FROM t.volume_usd OR d.cum IS DISTINCT FROM t.cumulative_usd)
			+ (SELECT count(*) FROM (SELECT e.day, (SELECT count(DISTINCT address) FROM osmosis_wallet_daily w
					WHERE w.swaps > 0 AND w.day >= e.day - interval '29 days' AND w.day <= e.day) AS want
				FROM generate_series('2026-11-15Z'::timestamptz, '2027-01-31Z', interval '1 day') e(day)) b
				LEFT JOIN osmosis_traders_30d tr USING (day) WHERE coalesce(tr.traders, 0) <> b.want)`).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	type traders struct {
		Day     time.Time `bun:"day"`
		Traders int       `bun:"traders"`
	}
	read := func() (out []traders) {
		t.Helper()
		if err := db.NewRaw("SELECT day, traders FROM osmosis_traders_30d ORDER BY day").Scan(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tip := range []int64{10, 75, 143, 144, 200, 289, 290, 299} {
		exec("UPDATE sync_state SET next_height = ?", tip+1)
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if n := mismatches(); n != 0 {
			t.Fatalf("tip %d: %d roll-up rows differ from their sources", tip, n)
		}
	}
	var want []traders
	for d := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC); !d.After(time.Date(2026, 12, 22, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
		want = append(want, traders{d, 7})
	}
	want[len(want)-2].Traders, want[len(want)-1].Traders = 6, 5
	stepped := read()
	for i := range stepped {
		stepped[i].Day = stepped[i].Day.UTC()
	}
	if !reflect.DeepEqual(stepped, want) {
		t.Errorf("traders per 30-day window:\n got %v\nwant %v", stepped, want)
	}
	var days int
	if err := db.NewRaw("SELECT count(DISTINCT day) FROM osmosis_asset_volume_daily").Scan(ctx, &days); err != nil || days != 3 {
		t.Errorf("asset volume over %d days, want 3 (%v)", days, err)
	}

	exec(`DELETE FROM aggregator_jobs; DELETE FROM osmosis_asset_prices; DELETE FROM osmosis_asset_volume_hourly; DELETE FROM osmosis_pool_volume_hourly;
		DELETE FROM osmosis_pair_last_swaps; DELETE FROM osmosis_price_state; DELETE FROM osmosis_wallet_daily; DELETE FROM osmosis_pool_flow_daily;
		DELETE FROM osmosis_pool_volume_daily; DELETE FROM osmosis_asset_volume_daily; DELETE FROM osmosis_traders_30d;
		DELETE FROM osmosis_volume_daily_totals`)
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := mismatches(); n != 0 {
		t.Fatalf("from scratch: %d roll-up rows differ from their sources", n)
	}
	once := read()
	for i := range once {
		once[i].Day = once[i].Day.UTC()
	}
	if !reflect.DeepEqual(once, want) {
		t.Errorf("traders from scratch:\n got %v\nwant %v", once, want)
	}
}
