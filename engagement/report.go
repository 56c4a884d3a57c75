package engagement

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Report is the per-campaign report built by the engagement_reports job.
type Report struct {
	CampaignID         int64     `json:"campaign_id"`
	Impressions        int64     `json:"impressions"`
	Clicks             int64     `json:"clicks"`
	CTR                *string   `json:"ctr"` // clicks / impressions, 4 decimals; null without impressions
	WebsiteConversions int64     `json:"website_conversions"`
	OnchainConversions int64     `json:"onchain_conversions"`
	ConversionValueUSD string    `json:"conversion_value_usd"`
	UniqueWallets      int64     `json:"unique_wallets"`
	ConvertingWallets  int64     `json:"converting_wallets"`
	Retention7d        *string   `json:"retention_7d"`
	Retention30d       *string   `json:"retention_30d"`
	ComputedAt         time.Time `json:"computed_at"`
}

// ErrNoReport is returned for a campaign whose report the
// engagement_reports job has not built yet.
var ErrNoReport = errors.New("no report yet: the engagement_reports aggregator job has not run since the campaign was created")

// ReadReport returns a campaign's report.
func ReadReport(ctx context.Context, db bun.IDB, campaignID int64) (*Report, error) {
	var (
		r        Report
		computed sql.NullTime
		value    sql.NullString
		counts   [7]sql.NullInt64
	)
	err := db.QueryRowContext(ctx, `SELECT c.id, r.impressions, r.clicks,
		CASE WHEN r.impressions > 0 THEN round(r.clicks::numeric / r.impressions, 4)::text END,
		r.website_conversions, r.onchain_conversions, r.conversion_value_usd::text, r.unique_wallets, r.converting_wallets,
		r.retention_7d::text, r.retention_30d::text, r.computed_at
		FROM campaigns c LEFT JOIN campaign_reports r ON r.campaign_id = c.id WHERE c.id = ?`, campaignID).
		Scan(&r.CampaignID, &counts[0], &counts[1], &r.CTR, &counts[2], &counts[3], &value, &counts[4], &counts[5],
			&r.Retention7d, &r.Retention30d, &computed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("campaign %d: %w", campaignID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("report of campaign %d: %w", campaignID, err)
	}
	if !computed.Valid {
		return nil, fmt.Errorf("campaign %d: %w", campaignID, ErrNoReport)
	}
	r.Impressions, r.Clicks, r.WebsiteConversions, r.OnchainConversions = counts[0].Int64, counts[1].Int64, counts[2].Int64, counts[3].Int64
	r.UniqueWallets, r.ConvertingWallets = counts[4].Int64, counts[5].Int64
	r.ConversionValueUSD, r.ComputedAt = value.String, computed.Time.UTC()
	return &r, nil
}

// ReportDay is a campaign's report of one UTC day (the
// engagement_report_days job).
type ReportDay struct {
	Day                string `json:"day" bun:"day"` // 2026-11-28
	Impressions        int64  `json:"impressions" bun:"impressions"`
	Clicks             int64  `json:"clicks" bun:"clicks"`
	WebsiteConversions int64  `json:"website_conversions" bun:"website_conversions"`
	OnchainConversions int64  `json:"onchain_conversions" bun:"onchain_conversions"`
	ConversionValueUSD string `json:"conversion_value_usd" bun:"conversion_value_usd"`
}

// ReadReportDays returns a campaign's report per day, oldest first (days
// without any impression, click or conversion are absent).
func ReadReportDays(ctx context.Context, db bun.IDB, campaignID int64) ([]ReportDay, error) {
	out := []ReportDay{}
	err := db.NewRaw(`SELECT to_char(day, 'YYYY-MM-DD') AS day, impressions, clicks, website_conversions, onchain_conversions,
		conversion_value_usd::text AS conversion_value_usd FROM campaign_report_days WHERE campaign_id = ? ORDER BY day`, campaignID).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("report days of campaign %d: %w", campaignID, err)
	}
	return out, nil
}
