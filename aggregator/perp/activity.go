package perp

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	report "github.com/chainlens/chainlens/report/perp"
)

// The activity roll-ups, kept as heights arrive so that an answer reads a
// window's buckets. Distinct traders do not add up across buckets, so the
// job keeps each trader's fills per bucket and counts what a run changes:
// a trader's first fill in a bucket adds one trader to it (and a new
// trader when it is the trader's first fill ever, and a retained trader to
// its cohort when the bucket is one of the four weeks after the cohort's),
// and a trader's fills crossing 10 or 100 add one to those classes. A
// run's cost follows its own fills, never the history nor a bucket's
// size. Arguments ?0 chain, ?1 watermark, ?2 last height, ?3 the
// resolutions (date_trunc units, buckets in UTC).
//
// One statement: its parts read the buckets as they were before the run
// (every part of a WITH sees the same snapshot) while one of them adds the
// run's fills.
const activitySQL = `WITH run AS (
		SELECT r.res, date_trunc(r.res, f.time, 'UTC') AS bucket, f.address, count(*) AS fills
		FROM (` + fillsByTrader + `) f CROSS JOIN unnest(?3::text[]) AS r(res)
		GROUP BY 1, 2, 3
	), d AS (
		SELECT run.res, run.bucket, run.address, run.fills, coalesce(b.fills, 0) AS before,
			date_trunc(run.res, p.first_fill_at, 'UTC') = run.bucket AS first_bucket,
			date_trunc('week', p.first_fill_at, 'UTC') AS cohort
		FROM run
		LEFT JOIN perp_trader_buckets b ON b.chain_id = ?0 AND b.resolution = run.res AND b.bucket = run.bucket AND b.address = run.address
		LEFT JOIN perp_traders p ON p.chain_id = ?0 AND p.address = run.address
	), kept AS (
		INSERT INTO perp_trader_buckets AS b (chain_id, resolution, bucket, address, fills)
		SELECT ?0, res, bucket, address, fills FROM run
		ON CONFLICT (chain_id, resolution, bucket, address) DO UPDATE SET fills = b.fills + EXCLUDED.fills
		RETURNING 1
	), counted AS (
		INSERT INTO perp_activity_buckets AS a (chain_id, resolution, bucket, traders, at_least_10, at_least_100, new_traders)
		SELECT ?0, res, bucket, count(*) FILTER (WHERE before = 0),
			count(*) FILTER (WHERE before < 10 AND before + fills >= 10),
			count(*) FILTER (WHERE before < 100 AND before + fills >= 100),
			count(*) FILTER (WHERE before = 0 AND first_bucket)
		FROM d GROUP BY res, bucket
		ON CONFLICT (chain_id, resolution, bucket) DO UPDATE SET traders = a.traders + EXCLUDED.traders,
			at_least_10 = a.at_least_10 + EXCLUDED.at_least_10, at_least_100 = a.at_least_100 + EXCLUDED.at_least_100,
			new_traders = a.new_traders + EXCLUDED.new_traders
		RETURNING 1
	), retained AS (
		INSERT INTO perp_retention_weeks AS r (chain_id, cohort, weeks_after, traders)
		SELECT ?0, cohort, (extract(epoch FROM bucket - cohort) / 604800)::smallint, count(*)
		FROM d WHERE res = 'week' AND before = 0 AND bucket > cohort AND bucket <= cohort + interval '672 hours'
		GROUP BY cohort, bucket
		ON CONFLICT (chain_id, cohort, weeks_after) DO UPDATE SET traders = r.traders + EXCLUDED.traders
		RETURNING 1
	)
	SELECT (SELECT count(*) FROM kept) + (SELECT count(*) FROM counted) + (SELECT count(*) FROM retained)`

// activity adds (from, to] to the activity roll-ups. It returns the rows
// written.
func activity(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
	var rows int64
	if err := tx.NewRaw(activitySQL, s.ChainID, from, to, pgdialect.Array(report.Resolutions)).Scan(ctx, &rows); err != nil {
		return 0, fmt.Errorf("%s: %w", report.ActivityBuckets, err)
	}
	return rows, nil
}
