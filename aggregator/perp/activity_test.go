package perp_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestActivityRollupsAcrossRuns: the counts the activity job keeps per
// bucket and per cohort week, and the traders' last-30-day fields, are
// those of the fills counted whole, however the fills were split between
// runs (runs of 20 heights over ten weeks of trades by 30 traders in 4
// markets split hours, days, weeks and months, and move the last-30-day
// window by a day or more at a time; one run, after a stop, moves it by
// more than its length).
func TestActivityRollupsAcrossRuns(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	const chain = "synth-dydx"
	cfg := &config.Config{Chains: []config.Chain{{ID: chain, Kind: "dydx"}}}
	rng := rand.New(rand.NewPCG(7, 11))
	start := time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC)
	var history []dydxtest.Trades
	for at := start.Add(time.Hour); at.Before(start.AddDate(0, 0, 70)); at = at.Add(time.Duration(1+rng.IntN(30)) * time.Hour) {
		trades := dydxtest.TradesOf(fmt.Sprintf("trader%02d", rng.IntN(30)), at.Format(time.DateTime), 1+rng.IntN(15))
		trades.Market = rng.Int32N(4)
		history = append(history, trades)
	}
	// The aggregator stops for weeks after its 10th run: the run after
	// that spans more than the last-30-day window.
	runs := 0
	dydxtest.IndexTrades(t, db, chain, start, start.AddDate(0, 0, 71), history, 20, func() {
		if runs++; runs <= 10 || runs >= 30 {
			apitest.RunJobs(t, db, cfg)
		}
	})

	var buckets, differ int
	if err := db.NewRaw(`WITH f AS (
			SELECT address, time, min(time) OVER (PARTITION BY address) AS first FROM dydx_fills WHERE chain_id = ?0
		), b AS (
			SELECT r.res, date_trunc(r.res, f.time, 'UTC') AS bucket, f.address, count(*) AS fills,
				bool_or(date_trunc(r.res, f.first, 'UTC') = date_trunc(r.res, f.time, 'UTC')) AS started
			FROM f CROSS JOIN unnest(ARRAY['hour', 'day', 'week', 'month']) AS r(res) GROUP BY 1, 2, 3
		), whole AS (
			SELECT ?0::text AS chain_id, res AS resolution, bucket, count(*) AS traders, count(*) FILTER (WHERE fills >= 10) AS at_least_10,
				count(*) FILTER (WHERE fills >= 100) AS at_least_100, count(*) FILTER (WHERE started) AS new_traders
			FROM b GROUP BY 1, 2, 3
		)
		SELECT (SELECT count(*) FROM perp_activity_buckets),
			(SELECT count(*) FROM (SELECT * FROM whole EXCEPT SELECT * FROM perp_activity_buckets
				UNION ALL (SELECT * FROM perp_activity_buckets EXCEPT SELECT * FROM whole)) d)`, chain).Scan(ctx, &buckets, &differ); err != nil {
		t.Fatal(err)
	}
	if buckets < 150 || differ != 0 {
		t.Errorf("%d activity buckets kept, %d differ from the fills counted whole", buckets, differ)
	}

	var cohorts, retained, differRetention int
	if err := db.NewRaw(`WITH w AS (
			SELECT DISTINCT address, date_trunc('week', time, 'UTC') AS week,
				date_trunc('week', min(time) OVER (PARTITION BY address), 'UTC') AS cohort
			FROM dydx_fills WHERE chain_id = ?0
		), whole AS (
			SELECT ?0::text AS chain_id, cohort, (extract(epoch FROM week - cohort) / 604800)::smallint AS weeks_after, count(*) AS traders
			FROM w WHERE week > cohort AND week <= cohort + interval '672 hours' GROUP BY 1, 2, 3
		)
		SELECT (SELECT count(DISTINCT cohort) FROM perp_retention_weeks), (SELECT count(*) FROM perp_retention_weeks),
			(SELECT count(*) FROM (SELECT * FROM whole EXCEPT SELECT * FROM perp_retention_weeks
				UNION ALL (SELECT * FROM perp_retention_weeks EXCEPT SELECT * FROM whole)) d)`, chain).Scan(ctx, &cohorts, &retained, &differRetention); err != nil {
		t.Fatal(err)
	}
	if cohorts < 3 || retained < 8 || differRetention != 0 {
		t.Errorf("%d cohorts, %d cohort weeks kept, %d differ from the fills counted whole", cohorts, retained, differRetention)
	}

	// The last 30 UTC days up to the day of the last block, with the top 3
	// markets by volume (ties: lower perpetual id).
	var windowTraders, windowMarkets, differWindow int
	if err := db.NewRaw(`WITH w AS (
			SELECT date_trunc('day', max(time), 'UTC') - interval '29 days' AS start FROM blocks WHERE chain_id = ?0
		), m AS (
			SELECT address, perpetual_id, count(*) AS trades, sum(notional) * 0.000001 AS volume, sum(fee) * 0.000001 AS fees
			FROM dydx_fills, w WHERE chain_id = ?0 AND time >= w.start GROUP BY 1, 2
		), a AS (
			SELECT address, sum(trades) AS trades, sum(volume) AS volume, sum(fees) AS fees,
				(array_agg(perpetual_id ORDER BY volume DESC, perpetual_id))[1:3] AS markets,
				(array_agg(volume ORDER BY volume DESC, perpetual_id))[1:3] AS volumes
			FROM m GROUP BY 1
		), whole AS (
			SELECT p.address, coalesce(a.trades, 0) AS trades, coalesce(a.volume, 0) AS volume, coalesce(a.fees, 0) AS fees,
				coalesce(a.markets, '{}') AS markets, coalesce(a.volumes, '{}') AS volumes
			FROM perp_traders p LEFT JOIN a USING (address) WHERE p.chain_id = ?0
		), kept AS (
			SELECT address, last_30d_trades, last_30d_volume_usdc, last_30d_fees_usdc, last_30d_top_markets, last_30d_top_volumes
			FROM perp_traders WHERE chain_id = ?0
		), rows AS (
			SELECT address, perpetual_id, trades, volume_usdc, fees_usdc FROM perp_trader_window_markets WHERE chain_id = ?0
		)
		SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM rows),
			(SELECT count(*) FROM (SELECT * FROM whole EXCEPT SELECT * FROM kept UNION ALL (SELECT * FROM kept EXCEPT SELECT * FROM whole)) d) +
			(SELECT count(*) FROM (SELECT * FROM m EXCEPT SELECT * FROM rows UNION ALL (SELECT * FROM rows EXCEPT SELECT * FROM m)) d)`,
		chain).Scan(ctx, &windowTraders, &windowMarkets, &differWindow); err != nil {
		t.Fatal(err)
	}
	if windowTraders < 10 || windowMarkets <= windowTraders || differWindow != 0 {
		t.Errorf("%d traders with %d markets in the last 30 days; %d rows differ from the fills counted whole", windowTraders, windowMarkets, differWindow)
	}
}

// TestDepositClassesAcrossRuns: the depositors the job counts per bucket
// in each size class are those of the deposits summed whole per address
// and bucket, however the deposits were split between runs (runs of 6
// heights; totals that cross 1,000 and 100,000 USDC over several runs).
func TestDepositClassesAcrossRuns(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	const chain = "synth-dydx"
	cfg := &config.Config{Chains: []config.Chain{{ID: chain, Kind: "dydx"}}}
	rng := rand.New(rand.NewPCG(3, 5))
	start := time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC)
	amounts := []int64{5, 300, 999, 1_000, 40_000, 99_999, 100_000, 250_000}
	var history []dydxtest.Trades
	for at := start.Add(time.Hour); at.Before(start.AddDate(0, 0, 45)); at = at.Add(time.Duration(1+rng.IntN(20)) * time.Hour) {
		history = append(history, dydxtest.DepositsOf(fmt.Sprintf("depositor%02d", rng.IntN(12)), at.Format(time.DateTime),
			1+rng.IntN(3), amounts[rng.IntN(len(amounts))]))
	}
	dydxtest.IndexTrades(t, db, chain, start, start.AddDate(0, 0, 46), history, 6, func() { apitest.RunJobs(t, db, cfg) })

	var buckets, differ int
	var classes string
	if err := db.NewRaw(`WITH b AS (
			SELECT r.res, date_trunc(r.res, time, 'UTC') AS bucket, sender, sum(quantums) * 0.000001 AS usdc
			FROM dydx_transfers CROSS JOIN unnest(ARRAY['hour', 'day', 'week', 'month']) AS r(res)
			WHERE chain_id = ?0 AND kind = 'deposit' GROUP BY 1, 2, 3
		), whole AS (
			SELECT ?0::text AS chain_id, res AS resolution, bucket, count(*) FILTER (WHERE usdc < 1000) AS small,
				count(*) FILTER (WHERE usdc >= 1000 AND usdc < 100000) AS medium, count(*) FILTER (WHERE usdc >= 100000) AS large
			FROM b GROUP BY 1, 2, 3
		)
		SELECT (SELECT count(*) FROM perp_deposit_classes),
			(SELECT count(*) FROM (SELECT * FROM whole EXCEPT SELECT * FROM perp_deposit_classes
				UNION ALL (SELECT * FROM perp_deposit_classes EXCEPT SELECT * FROM whole)) d),
			(SELECT concat_ws(' ', sum(small), sum(medium), sum(large)) FROM perp_deposit_classes WHERE resolution = 'month')`, chain).
		Scan(ctx, &buckets, &differ, &classes); err != nil {
		t.Fatal(err)
	}
	if buckets < 100 || differ != 0 {
		t.Errorf("%d deposit buckets kept (monthly classes %s), %d differ from the deposits summed whole", buckets, classes, differ)
	}
	t.Logf("monthly small, medium, large depositors: %s", classes)
}
