package perp

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	report "github.com/chainlens/chainlens/report/perp"
)

// The activity roll-ups, kept as heights arrive so that an answer reads a
// window's buckets: distinct traders do not add up across buckets, so each
// bucket a run touches is counted whole again from its traders' rows (one
// index range per bucket: the cost follows the bucket's traders, never the
// history). Arguments ?0 chain, ?1 watermark, ?2 last height, ?3 the
// resolutions (date_trunc units, buckets in UTC).
const (
	// Each trader's fills (a self-trade once) in the buckets of every
	// resolution.
	traderBucketsSQL = `INSERT INTO perp_trader_buckets AS b (chain_id, resolution, bucket, address, fills)
		SELECT ?0, r.res, date_trunc(r.res, f.time, 'UTC'), f.address, count(*)
		FROM (` + fillsByTrader + `) f CROSS JOIN unnest(?3::text[]) AS r(res)
		GROUP BY r.res, date_trunc(r.res, f.time, 'UTC'), f.address
		ON CONFLICT (chain_id, resolution, bucket, address) DO UPDATE SET fills = b.fills + EXCLUDED.fills`

	// touchedSQL is the buckets holding the run's fills.
	touchedSQL = `SELECT DISTINCT r.res, date_trunc(r.res, f.time, 'UTC') AS bucket
		FROM dydx_fills f CROSS JOIN unnest(?3::text[]) AS r(res)
		WHERE f.chain_id = ?0 AND f.height > ?1 AND f.height <= ?2`

	// A trader is new in the bucket of its first fill (perp_traders, at
	// least as far as this run: the job follows the perp_traders job).
	// Bucket membership is tested with date_trunc, never by adding a
	// length: a day or month added to a timestamptz follows the session's
	// time zone.
	activityBucketsSQL = `WITH t AS (` + touchedSQL + `)
		INSERT INTO perp_activity_buckets AS a (chain_id, resolution, bucket, traders, at_least_10, at_least_100, new_traders)
		SELECT ?0, t.res, t.bucket, c.traders, c.at_least_10, c.at_least_100, c.new_traders
		FROM t CROSS JOIN LATERAL (
			SELECT count(*) AS traders, count(*) FILTER (WHERE b.fills >= 10) AS at_least_10,
				count(*) FILTER (WHERE b.fills >= 100) AS at_least_100,
				count(*) FILTER (WHERE date_trunc(t.res, p.first_fill_at, 'UTC') = t.bucket) AS new_traders
			FROM perp_trader_buckets b
			LEFT JOIN perp_traders p ON p.chain_id = b.chain_id AND p.address = b.address
			WHERE b.chain_id = ?0 AND b.resolution = t.res AND b.bucket = t.bucket) c
		ON CONFLICT (chain_id, resolution, bucket) DO UPDATE SET traders = EXCLUDED.traders,
			at_least_10 = EXCLUDED.at_least_10, at_least_100 = EXCLUDED.at_least_100, new_traders = EXCLUDED.new_traders`

	// Each touched week is the k-th week (1 to 4) after the cohorts of the
	// four weeks before it: their traders with a fill in it, counted whole.
	// Weeks are compared as hours (168 a week), which no time zone moves.
	retentionWeeksSQL = `WITH t AS (
			SELECT DISTINCT date_trunc('week', time, 'UTC') AS week FROM dydx_fills
			WHERE chain_id = ?0 AND height > ?1 AND height <= ?2
		), c AS (
			SELECT date_trunc('week', p.first_fill_at, 'UTC') AS cohort, t.week
			FROM t
			JOIN perp_trader_buckets b ON b.chain_id = ?0 AND b.resolution = 'week' AND b.bucket = t.week
			JOIN perp_traders p ON p.chain_id = b.chain_id AND p.address = b.address
		)
		INSERT INTO perp_retention_weeks AS r (chain_id, cohort, weeks_after, traders)
		SELECT ?0, cohort, (extract(epoch FROM week - cohort) / 604800)::smallint, count(*)
		FROM c WHERE week > cohort AND week <= cohort + interval '672 hours'
		GROUP BY cohort, week
		ON CONFLICT (chain_id, cohort, weeks_after) DO UPDATE SET traders = EXCLUDED.traders`
)

// activity adds (from, to] to the activity roll-ups: the traders' rows per
// bucket first, then the counts of the buckets the heights touched.
func activity(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
	var rows int64
	for _, q := range []struct{ table, sql string }{
		{report.TraderBuckets, traderBucketsSQL},
		{report.ActivityBuckets, activityBucketsSQL},
		{report.RetentionWeeks, retentionWeeksSQL},
	} {
		res, err := tx.NewRaw(q.sql, s.ChainID, from, to, pgdialect.Array(report.Resolutions)).Exec(ctx)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", q.table, err)
		}
		n, _ := res.RowsAffected()
		rows += n
	}
	return rows, nil
}
