package campaigns

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
)

// ReportDays rebuilds campaign_report_days: a campaign's impressions,
// clicks, website and on-chain conversions and conversion value per UTC
// day (the day each happened), for every campaign whose report can still
// change (as Report). The console charts it; the day counts of a
// campaign add up to its campaign_reports row.
type ReportDays struct {
	Now func() time.Time
}

// Name is engagement_report_days.
func (ReportDays) Name() string { return "engagement_report_days" }

// Version is the version of the job's rows (see aggregator.Job).
func (ReportDays) Version() string { return "1" }

// Tables are the tables the job writes.
func (ReportDays) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"campaign_report_days"}}
}

// Run rewrites the days of the campaigns whose report can still change.
func (j ReportDays) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	now := time.Now()
	if j.Now != nil {
		now = j.Now()
	}
	final := fmt.Sprintf("%d seconds", int64(ReportFinalAfter/time.Second))
	// The campaigns to rewrite: never built, or still within their window.
	const open = `SELECT c.id FROM campaigns c
		WHERE NOT EXISTS (SELECT 1 FROM campaign_report_days d WHERE d.campaign_id = c.id)
		   OR c.end_date + make_interval(secs => c.attribution_window_s) + ?::interval > ?::timestamptz`
	if _, err := tx.NewRaw(`DELETE FROM campaign_report_days WHERE campaign_id IN (`+open+`)`, final, now).Exec(ctx); err != nil {
		return wm, 0, fmt.Errorf("campaign report days: %w", err)
	}
	res, err := tx.NewRaw(`
INSERT INTO campaign_report_days (campaign_id, day, impressions, clicks, website_conversions, onchain_conversions, conversion_value_usd)
SELECT campaign_id, day, sum(imp), sum(clk), sum(web), sum(onc), sum(val)
FROM (
    SELECT i.campaign_id, (i.shown_at AT TIME ZONE 'UTC')::date AS day, 1 AS imp, 0 AS clk, 0 AS web, 0 AS onc, 0::numeric AS val
    FROM impressions i WHERE i.campaign_id IN (`+open+`)
    UNION ALL
    SELECT k.campaign_id, (k.clicked_at AT TIME ZONE 'UTC')::date, 0, 1, 0, 0, 0
    FROM clicks k WHERE k.campaign_id IN (`+open+`)
    UNION ALL
    SELECT v.campaign_id, (v.converted_at AT TIME ZONE 'UTC')::date, 0, 0,
           (v.source = 'website')::int, (v.source = 'onchain')::int, coalesce(v.value_usd, 0)
    FROM conversions v WHERE v.campaign_id IN (`+open+`)
) e
GROUP BY campaign_id, day`, final, now, final, now, final, now).Exec(ctx)
	if err != nil {
		return wm, 0, fmt.Errorf("campaign report days: %w", err)
	}
	n, _ := res.RowsAffected()
	return now.Unix(), n, nil
}
