package engagement

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
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

// Admin is the admin HTTP API of campaigns (secret keys with the admin
// scope): list, export, import, pause, resume and the report.
type Admin struct {
	db *bun.DB
	// chains are the configured chains (id → kind), which goals and rules
	// must name.
	chains map[string]string
}

// NewAdmin returns the admin API over db for the configured chains (id → kind).
func NewAdmin(db *bun.DB, chains map[string]string) *Admin { return &Admin{db: db, chains: chains} }

// Register adds the admin routes to h.
func (a *Admin) Register(h api.Handlers) {
	h.Admin["GET /admin/campaigns"] = a.list
	h.Admin["POST /admin/campaigns"] = a.importFile
	h.Admin["GET /admin/campaigns/export"] = a.export
	h.Admin["GET /admin/campaigns/{id}"] = a.get
	h.Admin["POST /admin/campaigns/{id}/pause"] = a.setStatus("paused")
	h.Admin["POST /admin/campaigns/{id}/resume"] = a.setStatus("active")
	h.Admin["GET /admin/campaigns/{id}/report"] = a.report
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	return err
}

func campaignID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, problem.BadParam("id", "must be a positive campaign id")
	}
	return id, nil
}

func notFound(err error) error {
	if errors.Is(err, ErrNotFound) {
		return problem.Status(http.StatusNotFound, "%v", err)
	}
	if errors.Is(err, ErrNoReport) {
		return problem.Status(http.StatusNotFound, "%v", err)
	}
	return err
}

func (a *Admin) list(w http.ResponseWriter, r *http.Request) error {
	out, err := List(r.Context(), a.db)
	if err != nil {
		return err
	}
	if out == nil {
		out = []Summary{}
	}
	return writeJSON(w, http.StatusOK, out)
}

func (a *Admin) export(w http.ResponseWriter, r *http.Request) error {
	f, err := Export(r.Context(), a.db)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, f)
}

// get answers one campaign in the import format, with its audiences.
func (a *Admin) get(w http.ResponseWriter, r *http.Request) error {
	id, err := campaignID(r)
	if err != nil {
		return err
	}
	one, err := ExportCampaign(r.Context(), a.db, id)
	if err != nil {
		return notFound(err)
	}
	return writeJSON(w, http.StatusOK, one)
}

// importFile validates and writes a campaigns file (as `chainlens
// campaigns import`); every problem is listed in invalid_params.
func (a *Admin) importFile(w http.ResponseWriter, r *http.Request) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return problem.Status(http.StatusUnsupportedMediaType, "the body must be application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return problem.BadParam("body", fmt.Sprintf("not a campaigns file: %v", err))
	}
	if dec.More() {
		return problem.BadParam("body", "not a campaigns file: more after its JSON object")
	}
	if err := errors.Join(f.Validate(), f.CheckChains(a.chains)); err != nil {
		return problem.BadParam("body", err.Error())
	}
	res, err := Import(r.Context(), a.db, &f)
	if err != nil {
		return notFound(err)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"audiences": res.Audiences, "campaigns": res.Campaigns})
}

func (a *Admin) setStatus(status string) api.AdminHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := campaignID(r)
		if err != nil {
			return err
		}
		if err := SetStatus(r.Context(), a.db, id, status); err != nil {
			return notFound(err)
		}
		return writeJSON(w, http.StatusOK, map[string]any{"id": id, "status": status})
	}
}

func (a *Admin) report(w http.ResponseWriter, r *http.Request) error {
	id, err := campaignID(r)
	if err != nil {
		return err
	}
	rep, err := ReadReport(r.Context(), a.db, id)
	if err != nil {
		return notFound(err)
	}
	return writeJSON(w, http.StatusOK, rep)
}
