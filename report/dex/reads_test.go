package dex_test

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/internal/testdb"
	report "github.com/chainlens/chainlens/report/dex"
)

// TestReadsAtTimes: ReservesAt, PricesAt and VolumeBefore answer "at or
// before t" per key (each key's latest row up to t; none before its first),
// for several times at once, one chain's rows only.
func TestReadsAtTimes(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	h := func(n int) time.Time { return time.Date(2026, 11, 1, n, 0, 0, 0, time.UTC) }
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Pool 1 holds uosmo from hour 1 (changed at 3) and uatom from hour 2;
	// pool 2 holds uosmo from hour 5. Another chain's rows are never read.
	for _, r := range []struct {
		chain, denom string
		pool         int64
		hour         int
		amount       string
	}{
		{"c", "uosmo", 1, 1, "100"}, {"c", "uosmo", 1, 3, "150"}, {"c", "uatom", 1, 2, "7"},
		{"c", "uosmo", 2, 5, "9"}, {"other", "uosmo", 1, 0, "1"},
	} {
		exec("INSERT INTO "+report.PoolReserves+" (chain_id, pool_id, denom, hour, amount) VALUES (?, ?, ?, ?, ?)", r.chain, r.pool, r.denom, h(r.hour), r.amount)
		exec("INSERT INTO "+report.AssetPrices+" (chain_id, denom, hour, price_usd) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", r.chain, r.denom, h(r.hour), r.amount+".5")
	}
	keep := func(chain string, h0 time.Time) {
		t.Helper()
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := report.KeepLatestReserves(ctx, tx, chain, h0); err != nil {
				return err
			}
			return report.KeepLatestPrices(ctx, tx, chain, h0)
		}); err != nil {
			t.Fatal(err)
		}
	}
	keep("c", h(0))
	keep("other", h(0))
	ts := []time.Time{h(0), h(2), h(3).Add(30 * time.Minute), h(9)}
	reserves, err := report.ReservesAt(ctx, db, "c", ts)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(reserves, func(a, b report.Reserve) int {
		return cmp.Or(cmp.Compare(a.I, b.I), cmp.Compare(a.PoolID, b.PoolID), cmp.Compare(a.Denom, b.Denom))
	})
	wantReserves := []report.Reserve{
		{1, 1, "uatom", "7"}, {1, 1, "uosmo", "100"},
		{2, 1, "uatom", "7"}, {2, 1, "uosmo", "150"},
		{3, 1, "uatom", "7"}, {3, 1, "uosmo", "150"}, {3, 2, "uosmo", "9"},
	}
	if !reflect.DeepEqual(reserves, wantReserves) {
		t.Errorf("ReservesAt = %v\nwant %v", reserves, wantReserves)
	}
	// The job rewrites from hour 3: pool 1's uosmo loses its row of hour
	// 3 (back to hour 1's), its uatom gains one at hour 4, pool 2's only
	// row goes; the latest rows follow.
	exec("DELETE FROM "+report.PoolReserves+" WHERE chain_id = 'c' AND hour >= ?", h(3))
	exec("INSERT INTO "+report.PoolReserves+" (chain_id, pool_id, denom, hour, amount) VALUES ('c', 1, 'uatom', ?, 8)", h(4))
	keep("c", h(3))
	again, err := report.ReservesAt(ctx, db, "c", []time.Time{h(3), h(9)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []report.Reserve{{0, 1, "uatom", "7"}, {1, 1, "uatom", "8"}, {0, 1, "uosmo", "100"}, {1, 1, "uosmo", "100"}}; !reflect.DeepEqual(again, want) {
		t.Errorf("after a rewrite from hour 3: ReservesAt = %v\nwant %v", again, want)
	}
	prices, err := report.PricesAt(ctx, db, "c", ts)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(prices, func(a, b report.Price) int {
		return cmp.Or(cmp.Compare(a.I, b.I), cmp.Compare(a.Denom, b.Denom))
	})
	wantPrices := []report.Price{
		{1, "uatom", "7.5"}, {1, "uosmo", "100.5"},
		{2, "uatom", "7.5"}, {2, "uosmo", "150.5"},
		{3, "uatom", "7.5"}, {3, "uosmo", "9.5"},
	}
	if !reflect.DeepEqual(prices, wantPrices) {
		t.Errorf("PricesAt = %v\nwant %v", prices, wantPrices)
	}
	// The filtered reads: those keys' rows of the whole reads, nothing for
	// no key.
	osmo, err := report.DenomPricesAt(ctx, db, "c", ts, []string{"uosmo", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []report.Price{{1, "uosmo", "100.5"}, {2, "uosmo", "150.5"}, {3, "uosmo", "9.5"}}; !reflect.DeepEqual(osmo, want) {
		t.Errorf("DenomPricesAt(uosmo) = %v\nwant %v", osmo, want)
	}
	pool1, err := report.PoolReservesAt(ctx, db, "c", []time.Time{h(3), h(9)}, []int64{1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []report.Reserve{{0, 1, "uatom", "7"}, {1, 1, "uatom", "8"}, {0, 1, "uosmo", "100"}, {1, 1, "uosmo", "100"}}; !reflect.DeepEqual(pool1, want) {
		t.Errorf("PoolReservesAt(1) = %v\nwant %v", pool1, want)
	}
	for _, none := range [][]int64{nil, {}, {7}} {
		if rs, err := report.PoolReservesAt(ctx, db, "c", ts, none); err != nil || len(rs) != 0 {
			t.Errorf("PoolReservesAt(%v) = %v, %v; want none", none, rs, err)
		}
	}
	if ps, err := report.DenomPricesAt(ctx, db, "c", ts, nil); err != nil || len(ps) != 0 {
		t.Errorf("DenomPricesAt(nil) = %v, %v; want none", ps, err)
	}

	// The running volume total of the days before a day.
	exec("INSERT INTO " + report.VolumeDailyTotals + " (chain_id, day, volume_usd, cumulative_usd) VALUES ('c', '2026-11-01', 5, 5), ('c', '2026-11-03', 2.5, 7.5), ('other', '2026-10-01', 1, 1)")
	for _, c := range []struct {
		day  string
		want string
	}{{"2026-11-01", "0"}, {"2026-11-02", "5"}, {"2026-11-03", "5"}, {"2026-11-04", "7.5"}} {
		d, _ := time.Parse(time.DateOnly, c.day)
		if got, err := report.VolumeBefore(ctx, db, "c", d); err != nil || got != c.want {
			t.Errorf("VolumeBefore(%s) = %q, %v; want %q", c.day, got, err, c.want)
		}
	}
}

// TestPoolRewardsFrom: the window sums read from the hours of the window's
// first day and the daily sums after it equal the sums of the hours
// overlapping [from, ∞) (the hours after from − 1 h), for windows starting
// on and off the hour and the day, before and after the job rewrites hours
// from the middle of a day; pools are filtered, other chains never read.
func TestPoolRewardsFrom(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	insert := func(chain string, pool int64, hour time.Time, v string) {
		t.Helper()
		if _, err := db.NewRaw("INSERT INTO "+report.PoolRewards+" (chain_id, pool_id, hour, fees_usd, native_usd, boost_usd, superfluid_usd) VALUES (?, ?, ?, ?, ?, ?, ?)",
			chain, pool, hour, v, v+"1", "0.000000000000000000", "-"+v).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Three days of hours, one in three missing, scales of 18 and 2
	// decimals; another chain's pool 1 every hour.
	for h := 0; h < 72; h++ {
		at := base.Add(time.Duration(h) * time.Hour)
		insert("other", 1, at, "1000.000000000000000000")
		for pool := int64(1); pool <= 3; pool++ {
			if (h+int(pool))%3 == 0 {
				continue
			}
			v := fmt.Sprintf("%d.%018d", h*int(pool), h*7919+int(pool))
			if pool == 3 {
				v = fmt.Sprintf("%d.%02d", h, h%100)
			}
			insert("c", pool, at, v)
		}
	}
	keep := func(chain string, h0 time.Time) {
		t.Helper()
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := report.KeepPoolRewardsDaily(ctx, tx, chain, h0)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	keep("c", base)
	keep("other", base)
	check := func(label string) {
		t.Helper()
		froms := []time.Time{base.Add(-time.Hour), base, base.Add(90 * time.Minute), base.Add(23 * time.Hour), base.Add(24 * time.Hour),
			base.Add(24*time.Hour + time.Microsecond), base.Add(47*time.Hour + 59*time.Minute), base.Add(71 * time.Hour), base.Add(80 * time.Hour)}
		for _, from := range froms {
			for _, pools := range [][]int64{nil, {2}, {1, 3, 9}} {
				got, err := report.PoolRewardsFrom(ctx, db, "c", from, pools)
				if err != nil {
					t.Fatal(err)
				}
				var want []report.RewardSums
				if err := db.NewRaw(`SELECT pool_id, sum(fees_usd)::text AS fees, sum(native_usd)::text AS native, sum(boost_usd)::text AS boost,
						sum(superfluid_usd)::text AS sf FROM `+report.PoolRewards+`
					WHERE chain_id = 'c' AND hour > ? AND (?::bigint[] IS NULL OR pool_id = ANY(?::bigint[]))
					GROUP BY pool_id ORDER BY pool_id`, from.Add(-time.Hour), pgdialect.Array(pools), pgdialect.Array(pools)).Scan(ctx, &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: PoolRewardsFrom(%s, %v) = %v\nwant %v", label, from.Format(time.RFC3339Nano), pools, got, want)
				}
			}
		}
	}
	check("built")
	// The job rewrites from hour 30 (day 2): pool 2 loses its hours, pool
	// 1 gets other values, a new pool 4 appears.
	h30 := base.Add(30 * time.Hour)
	if _, err := db.NewRaw("DELETE FROM "+report.PoolRewards+" WHERE chain_id = 'c' AND hour >= ?", h30).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for h := 30; h < 75; h++ {
		insert("c", 1, base.Add(time.Duration(h)*time.Hour), fmt.Sprintf("%d.5", h))
		insert("c", 4, base.Add(time.Duration(h)*time.Hour), "0.000000000000000001")
	}
	keep("c", h30)
	check("rewritten")
	if got, err := report.PoolRewardsFrom(ctx, db, "c", base, []int64{}); err != nil || got != nil {
		t.Errorf("PoolRewardsFrom(no pools) = %v, %v; want none", got, err)
	}
}
