package campaigns

import (
	"context"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	"github.com/uptrace/bun"
)

// ReportFinalAfter is how long after its attribution window closes a
// campaign's report is still rebuilt (retention needs 30 more days).
const ReportFinalAfter = 31 * 24 * time.Hour

// Report rebuilds campaign_reports: impressions, clicks, website and
// on-chain conversions, conversion value, unique and converting wallets,
// and 7/30-day retention, for every campaign whose report can still change.
//
// Retention N: of the wallets whose first conversion is at least N days
// old, the share that converted again, or sent a tracked event, N or more
// days after their first conversion.
type Report struct {
	Now func() time.Time
}

// Name is engagement_reports.
func (Report) Name() string { return "engagement_reports" }

// Version is the version of the job's rows (see aggregator.Job).
// Version 2: clicks recorded as the wallet "global" (before clicks from
// global placements were stored without a wallet) count as nobody.
func (Report) Version() string { return "2" }

// Tables are the tables the job writes: the per-campaign reports, derived
// from the conversions and events whole.
func (Report) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"campaign_reports"}}
}

// Run upserts the report rows.
func (j Report) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	now := time.Now()
	if j.Now != nil {
		now = j.Now()
	}
	res, err := tx.NewRaw(`
WITH p AS (SELECT ?::timestamptz AS now, ?::interval AS final)
INSERT INTO campaign_reports (campaign_id, impressions, clicks, website_conversions, onchain_conversions, conversion_value_usd,
    unique_wallets, converting_wallets, retention_7d, retention_30d, computed_at)
SELECT c.id, imp.n, clk.n, conv.website, conv.onchain, conv.value, wal.n, conv.wallets,
       CASE WHEN ret.base7 > 0 THEN round(ret.back7::numeric / ret.base7, 4) END,
       CASE WHEN ret.base30 > 0 THEN round(ret.back30::numeric / ret.base30, 4) END,
       p.now
FROM p CROSS JOIN campaigns c
LEFT JOIN campaign_reports r ON r.campaign_id = c.id
CROSS JOIN LATERAL (SELECT count(*) AS n FROM impressions i WHERE i.campaign_id = c.id) imp
CROSS JOIN LATERAL (SELECT count(*) AS n FROM clicks k WHERE k.campaign_id = c.id) clk
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE v.source = 'website') AS website, count(*) FILTER (WHERE v.source = 'onchain') AS onchain,
           coalesce(sum(v.value_usd), 0) AS value, count(DISTINCT v.address_norm) FILTER (WHERE v.address_norm <> '') AS wallets
    FROM conversions v WHERE v.campaign_id = c.id) conv
CROSS JOIN LATERAL (
    SELECT count(*) AS n FROM (
        SELECT address_norm FROM impressions WHERE campaign_id = c.id AND address_norm NOT IN ('', 'global')
        UNION SELECT address_norm FROM clicks WHERE campaign_id = c.id AND address_norm NOT IN ('', 'global')) u) wal
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE f.first <= p.now - interval '7 days') AS base7,
           count(*) FILTER (WHERE f.first <= p.now - interval '7 days' AND f.last >= f.first + interval '7 days') AS back7,
           count(*) FILTER (WHERE f.first <= p.now - interval '30 days') AS base30,
           count(*) FILTER (WHERE f.first <= p.now - interval '30 days' AND f.last >= f.first + interval '30 days') AS back30
    FROM (
        SELECT v.address_norm, min(v.converted_at) AS first,
               greatest(max(v.converted_at), (SELECT max(e.timestamp) FROM tracked_events e WHERE e.identity_norm = v.address_norm)) AS last
        FROM conversions v WHERE v.campaign_id = c.id AND v.address_norm <> '' GROUP BY v.address_norm) f) ret
WHERE r.campaign_id IS NULL OR c.end_date + make_interval(secs => c.attribution_window_s) + p.final > p.now
ON CONFLICT (campaign_id) DO UPDATE SET impressions = EXCLUDED.impressions, clicks = EXCLUDED.clicks,
    website_conversions = EXCLUDED.website_conversions, onchain_conversions = EXCLUDED.onchain_conversions,
    conversion_value_usd = EXCLUDED.conversion_value_usd, unique_wallets = EXCLUDED.unique_wallets,
    converting_wallets = EXCLUDED.converting_wallets, retention_7d = EXCLUDED.retention_7d,
    retention_30d = EXCLUDED.retention_30d, computed_at = EXCLUDED.computed_at`, now, fmt.Sprintf("%d seconds", int64(ReportFinalAfter/time.Second))).Exec(ctx)
	if err != nil {
		return wm, 0, fmt.Errorf("campaign reports: %w", err)
	}
	n, _ := res.RowsAffected()
	return now.Unix(), n, nil
}
