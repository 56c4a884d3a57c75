package engagement

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// ErrNotFound is returned for an unknown campaign.
var ErrNotFound = errors.New("campaign not found")

// DefaultAttributionWindow is a campaign's attribution window when the file
// does not set one.
const DefaultAttributionWindow = 7 * 24 * time.Hour

// File is the JSON document of `chainlens campaigns import` and `export`.
type File struct {
	Audiences []AudienceSpec `json:"audiences"`
	Campaigns []CampaignSpec `json:"campaigns"`
}

// AudienceSpec is one audience of a File; audiences are keyed by name.
type AudienceSpec struct {
	Name string `json:"name"`
	// Kind is global (every address), addresses (the listed ones) or rule
	// (members filled by a job from Rule).
	Kind      string          `json:"kind"`
	Addresses []string        `json:"addresses,omitempty"`
	Rule      json.RawMessage `json:"rule,omitempty"`
}

// CampaignSpec is one campaign of a File. With an id it replaces that
// campaign (which must exist); without one it is created.
type CampaignSpec struct {
	ID                int64          `json:"id,omitempty"`
	Owner             string         `json:"owner"`
	Name              string         `json:"name"`
	Topic             string         `json:"topic"`
	StartDate         string         `json:"start_date"` // RFC 3339
	EndDate           string         `json:"end_date"`   // RFC 3339, after start_date
	Status            string         `json:"status,omitempty"`
	Priority          int            `json:"priority"`
	ImpressionBudget  *int64         `json:"impression_budget,omitempty"`
	ClickBudget       *int64         `json:"click_budget,omitempty"`
	FrequencyCap      *int           `json:"frequency_cap,omitempty"`
	AttributionWindow string         `json:"attribution_window,omitempty"` // Go duration, e.g. 168h
	Audiences         []string       `json:"audiences"`                    // audience names
	Creatives         []CreativeSpec `json:"creatives"`
	// Goals are the conversions counted for the campaign (none: only
	// impressions and clicks are reported).
	Goals []GoalSpec `json:"goals,omitempty"`
	// UTM are the utm values of the campaign's links: /click adds them to
	// the target URL, and website events that carry them are attributed
	// to the campaign.
	UTM *UTM `json:"utm,omitempty"`
	// Impressions and Clicks are the counters, written by export and ignored by import.
	Impressions int64 `json:"impressions,omitempty"`
	Clicks      int64 `json:"clicks,omitempty"`
}

// UTM are a campaign's utm values: campaign (required), source and medium
// (optional; when set, an event must carry the same).
type UTM struct {
	Campaign string `json:"campaign"`
	Source   string `json:"source,omitempty"`
	Medium   string `json:"medium,omitempty"`
}

// MaxUTMLen bounds a utm value.
const MaxUTMLen = 200

// CreativeSpec is one creative of a campaign: at most one per position.
type CreativeSpec struct {
	PositionID string  `json:"position_id"`
	Logo       string  `json:"logo"`
	Title      string  `json:"title"`
	Body       string  `json:"body"`
	CTA        string  `json:"cta"`
	URL        string  `json:"url"`
	BannerURL  *string `json:"banner_url"`
}

// Validate checks a File and returns every problem, each naming its field.
func (f *File) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if len(f.Audiences) == 0 && len(f.Campaigns) == 0 {
		bad("file", "holds no audience and no campaign: nothing to import")
	}
	names := map[string]bool{}
	for i, a := range f.Audiences {
		p := fmt.Sprintf("audiences[%d]", i)
		if strings.TrimSpace(a.Name) == "" {
			bad(p+".name", "is required")
		}
		if names[a.Name] {
			bad(p+".name", "%q is listed twice", a.Name)
		}
		names[a.Name] = true
		switch a.Kind {
		case "global":
		case "addresses":
			for j, addr := range a.Addresses {
				if _, err := Normalize(addr); err != nil {
					bad(fmt.Sprintf("%s.addresses[%d]", p, j), "%q is %v", addr, err)
				}
			}
		case "rule":
			if len(a.Rule) == 0 || !json.Valid(a.Rule) || a.Rule[0] != '{' {
				bad(p+".rule", "a rule audience needs a JSON object rule")
			} else if _, err := ParseRule(a.Rule); err != nil {
				bad(p+".rule", "%v", err)
			}
		default:
			bad(p+".kind", "must be global, addresses or rule, not %q", a.Kind)
		}
	}
	for i, c := range f.Campaigns {
		p := fmt.Sprintf("campaigns[%d]", i)
		if strings.TrimSpace(c.Owner) == "" {
			bad(p+".owner", "is required")
		}
		if strings.TrimSpace(c.Name) == "" {
			bad(p+".name", "is required")
		}
		start, err1 := time.Parse(time.RFC3339, c.StartDate)
		if err1 != nil {
			bad(p+".start_date", "must be an RFC 3339 time, e.g. 2026-01-01T00:00:00Z (got %q)", c.StartDate)
		}
		end, err2 := time.Parse(time.RFC3339, c.EndDate)
		if err2 != nil {
			bad(p+".end_date", "must be an RFC 3339 time, e.g. 2026-02-01T00:00:00Z (got %q)", c.EndDate)
		}
		if err1 == nil && err2 == nil && !start.Before(end) {
			bad(p+".end_date", "must be after start_date")
		}
		if c.Status != "" && c.Status != "active" && c.Status != "paused" {
			bad(p+".status", "must be active or paused, not %q", c.Status)
		}
		if c.ImpressionBudget != nil && *c.ImpressionBudget < 0 {
			bad(p+".impression_budget", "must not be negative")
		}
		if c.ClickBudget != nil && *c.ClickBudget < 0 {
			bad(p+".click_budget", "must not be negative")
		}
		if c.FrequencyCap != nil && *c.FrequencyCap < 1 {
			bad(p+".frequency_cap", "must be at least 1")
		}
		if c.AttributionWindow != "" {
			if d, err := time.ParseDuration(c.AttributionWindow); err != nil || d < time.Second {
				bad(p+".attribution_window", "must be a duration of at least 1s, e.g. 168h (got %q)", c.AttributionWindow)
			}
		}
		if c.UTM != nil {
			for _, v := range []struct{ name, value string }{{"campaign", c.UTM.Campaign}, {"source", c.UTM.Source}, {"medium", c.UTM.Medium}} {
				switch {
				case v.name == "campaign" && strings.TrimSpace(v.value) == "":
					bad(p+".utm.campaign", "must not be empty")
				case utf8.RuneCountInString(v.value) > MaxUTMLen || strings.ContainsRune(v.value, 0):
					bad(p+".utm."+v.name, "must be at most %d characters, without NUL", MaxUTMLen)
				}
			}
		}
		if len(c.Audiences) == 0 {
			bad(p+".audiences", "at least one audience is required")
		}
		for j, a := range c.Audiences {
			if !names[a] {
				bad(fmt.Sprintf("%s.audiences[%d]", p, j), "audience %q is not defined in this file", a)
			}
		}
		if len(c.Creatives) == 0 {
			bad(p+".creatives", "at least one creative is required")
		}
		for j, g := range c.Goals {
			errs = append(errs, g.validate(fmt.Sprintf("%s.goals[%d]", p, j))...)
		}
		positions := map[string]bool{}
		for j := range c.Creatives {
			cr := &c.Creatives[j] // its URLs are normalised in place
			q := fmt.Sprintf("%s.creatives[%d]", p, j)
			if strings.TrimSpace(cr.PositionID) == "" {
				bad(q+".position_id", "must not be empty")
			} else if positions[cr.PositionID] {
				bad(q+".position_id", "%q has two creatives", cr.PositionID)
			}
			positions[cr.PositionID] = true
			var err error
			if cr.URL, err = normalURL(cr.URL); err != nil {
				bad(q+".url", "%v", err)
			}
			if cr.Logo != "" {
				if cr.Logo, err = normalURL(cr.Logo); err != nil {
					bad(q+".logo", "%v", err)
				}
			}
			if cr.BannerURL != nil {
				u, err := normalURL(*cr.BannerURL)
				if err != nil {
					bad(q+".banner_url", "%v", err)
				}
				cr.BannerURL = &u
			}
		}
	}
	return errors.Join(errs...)
}

// normalURL accepts absolute http(s) URLs with a host and returns them
// with the scheme in lower case (schemes are case-insensitive: HTTPS://
// is https://), the rest as written: the stored URL is what /campaign
// answers and /click compares.
func normalURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return s, fmt.Errorf("%q must be an absolute http or https URL", s)
	}
	return u.Scheme + s[len(u.Scheme):], nil
}

// ImportResult says what an import wrote.
type ImportResult struct {
	Audiences int
	Campaigns []int64 // ids, in file order
}

// Import validates f and writes it in one transaction: audiences are
// upserted by name (an addresses audience's members are replaced), campaigns
// with an id are replaced and the others created; creative positions not
// known yet are added to the configured placements.
func Import(ctx context.Context, db *bun.DB, f *File) (*ImportResult, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	res := &ImportResult{}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		audID := map[string]int64{}
		for _, a := range f.Audiences {
			var rule any
			if a.Kind == "rule" {
				rule = string(a.Rule)
			}
			var id int64
			if err := tx.QueryRowContext(ctx, `INSERT INTO audiences (name, kind, rule) VALUES (?, ?, ?::jsonb)
				ON CONFLICT (name) DO UPDATE SET kind = EXCLUDED.kind, rule = EXCLUDED.rule RETURNING id`,
				a.Name, a.Kind, rule).Scan(&id); err != nil {
				return fmt.Errorf("audience %q: %w", a.Name, err)
			}
			audID[a.Name] = id
			if a.Kind == "addresses" || a.Kind == "global" {
				if _, err := tx.ExecContext(ctx, `DELETE FROM audience_members WHERE audience_id = ?`, id); err != nil {
					return fmt.Errorf("audience %q: %w", a.Name, err)
				}
			}
			if a.Kind == "addresses" && len(a.Addresses) > 0 {
				norm := make([]string, len(a.Addresses))
				for i, addr := range a.Addresses {
					norm[i], _ = Normalize(addr)
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO audience_members (audience_id, address)
					SELECT ?, unnest(?::text[]) ON CONFLICT DO NOTHING`, id, pgdialect.Array(norm)); err != nil {
					return fmt.Errorf("audience %q members: %w", a.Name, err)
				}
			}
			res.Audiences++
		}
		for i, c := range f.Campaigns {
			id, err := writeCampaign(ctx, tx, c, audID)
			if err != nil {
				return fmt.Errorf("campaigns[%d] %q: %w", i, c.Name, err)
			}
			res.Campaigns = append(res.Campaigns, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func writeCampaign(ctx context.Context, tx bun.Tx, c CampaignSpec, audID map[string]int64) (int64, error) {
	start, _ := time.Parse(time.RFC3339, c.StartDate)
	end, _ := time.Parse(time.RFC3339, c.EndDate)
	status := c.Status
	if status == "" {
		status = "active"
	}
	window := DefaultAttributionWindow
	if c.AttributionWindow != "" {
		window, _ = time.ParseDuration(c.AttributionWindow)
	}
	var utmCampaign, utmSource, utmMedium *string
	if c.UTM != nil {
		utmCampaign, utmSource, utmMedium = &c.UTM.Campaign, nonEmpty(c.UTM.Source), nonEmpty(c.UTM.Medium)
	}
	args := []any{c.Owner, c.Name, c.Topic, start.UTC(), end.UTC(), status, c.Priority, c.ImpressionBudget, c.ClickBudget, c.FrequencyCap, int64(window / time.Second),
		utmCampaign, utmSource, utmMedium}
	id := c.ID
	if id == 0 {
		if err := tx.QueryRowContext(ctx, `INSERT INTO campaigns (owner, name, topic, start_date, end_date, status, priority,
			impression_budget, click_budget, frequency_cap, attribution_window_s, utm_campaign, utm_source, utm_medium)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			args...).Scan(&id); err != nil {
			return 0, err
		}
	} else {
		r, err := tx.ExecContext(ctx, `UPDATE campaigns SET owner = ?, name = ?, topic = ?, start_date = ?, end_date = ?, status = ?,
			priority = ?, impression_budget = ?, click_budget = ?, frequency_cap = ?, attribution_window_s = ?,
			utm_campaign = ?, utm_source = ?, utm_medium = ?, updated_at = now()
			WHERE id = ?`, append(args, id)...)
		if err != nil {
			return 0, err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return 0, fmt.Errorf("id %d: %w", id, ErrNotFound)
		}
		// Goals are replaced only when they changed: their ids key the
		// conversions already attributed.
		for _, q := range []string{`DELETE FROM creatives WHERE campaign_id = ?`, `DELETE FROM campaign_audiences WHERE campaign_id = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return 0, err
			}
		}
	}
	for _, a := range c.Audiences {
		if _, err := tx.ExecContext(ctx, `INSERT INTO campaign_audiences (campaign_id, audience_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, audID[a]); err != nil {
			return 0, err
		}
	}
	if err := writeGoals(ctx, tx, id, c.Goals); err != nil {
		return 0, err
	}
	for _, cr := range c.Creatives {
		if _, err := tx.ExecContext(ctx, `INSERT INTO engagement_positions (id) VALUES (?) ON CONFLICT DO NOTHING`, cr.PositionID); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO creatives (campaign_id, position_id, logo, title, body, cta, url, banner_url)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, cr.PositionID, cr.Logo, cr.Title, cr.Body, cr.CTA, cr.URL, cr.BannerURL); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// Summary is one campaign row of `campaigns list`.
type Summary struct {
	ID          int64     `json:"id"`
	Owner       string    `json:"owner"`
	Name        string    `json:"name"`
	Status      string    `json:"status"`
	Priority    int       `json:"priority"`
	StartDate   time.Time `json:"start_date"`
	EndDate     time.Time `json:"end_date"`
	Impressions int64     `json:"impressions"`
	Clicks      int64     `json:"clicks"`
}

// List returns every campaign, newest first.
func List(ctx context.Context, db bun.IDB) ([]Summary, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, owner, name, status, priority, start_date, end_date, impressions, clicks
		FROM campaigns ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list campaigns: %w", err)
	}
	defer rows.Close()
	var out []Summary
	for rows.Next() {
		var s Summary
		if err := rows.Scan(&s.ID, &s.Owner, &s.Name, &s.Status, &s.Priority, &s.StartDate, &s.EndDate, &s.Impressions, &s.Clicks); err != nil {
			return nil, fmt.Errorf("list campaigns: %w", err)
		}
		s.StartDate, s.EndDate = s.StartDate.UTC(), s.EndDate.UTC()
		out = append(out, s)
	}
	return out, rows.Err()
}

// SetStatus pauses or resumes a campaign.
func SetStatus(ctx context.Context, db bun.IDB, id int64, status string) error {
	if status != "active" && status != "paused" {
		return fmt.Errorf("status must be active or paused, not %q", status)
	}
	r, err := db.ExecContext(ctx, `UPDATE campaigns SET status = ?, updated_at = now() WHERE id = ?`, status, id)
	if err != nil {
		return fmt.Errorf("set campaign %d %s: %w", id, status, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return fmt.Errorf("campaign %d: %w", id, ErrNotFound)
	}
	return nil
}

// Export returns every audience and campaign as a File that Import accepts
// (campaigns keep their ids, so importing an export replaces them in place).
// Members of rule audiences are not exported (a job derives them).
func Export(ctx context.Context, db bun.IDB) (*File, error) {
	f := &File{Audiences: []AudienceSpec{}, Campaigns: []CampaignSpec{}}
	audName := map[int64]string{}
	rows, err := db.QueryContext(ctx, `SELECT id, name, kind, coalesce(rule::text, '') FROM audiences ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("export audiences: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var a AudienceSpec
		var id int64
		var rule string
		if err := rows.Scan(&id, &a.Name, &a.Kind, &rule); err != nil {
			rows.Close()
			return nil, fmt.Errorf("export audiences: %w", err)
		}
		if rule != "" {
			a.Rule = json.RawMessage(rule)
		}
		audName[id] = a.Name
		ids = append(ids, id)
		f.Audiences = append(f.Audiences, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("export audiences: %w", err)
	}
	for i, id := range ids {
		if f.Audiences[i].Kind != "addresses" {
			continue
		}
		var members []string
		if err := db.NewRaw(`SELECT address FROM audience_members WHERE audience_id = ? ORDER BY address`, id).Scan(ctx, &members); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("export audience members: %w", err)
		}
		for _, m := range members {
			f.Audiences[i].Addresses = append(f.Audiences[i].Addresses, "0x"+m)
		}
	}
	crows, err := db.QueryContext(ctx, `SELECT id, owner, name, topic, start_date, end_date, status, priority, impression_budget,
		click_budget, frequency_cap, attribution_window_s, impressions, clicks, utm_campaign, coalesce(utm_source, ''), coalesce(utm_medium, '')
		FROM campaigns ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("export campaigns: %w", err)
	}
	for crows.Next() {
		var c CampaignSpec
		var start, end time.Time
		var window int64
		var utm UTM
		var utmCampaign *string
		if err := crows.Scan(&c.ID, &c.Owner, &c.Name, &c.Topic, &start, &end, &c.Status, &c.Priority, &c.ImpressionBudget,
			&c.ClickBudget, &c.FrequencyCap, &window, &c.Impressions, &c.Clicks, &utmCampaign, &utm.Source, &utm.Medium); err != nil {
			crows.Close()
			return nil, fmt.Errorf("export campaigns: %w", err)
		}
		c.StartDate, c.EndDate = start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339)
		c.AttributionWindow = (time.Duration(window) * time.Second).String()
		if utmCampaign != nil {
			utm.Campaign = *utmCampaign
			c.UTM = &utm
		}
		f.Campaigns = append(f.Campaigns, c)
	}
	crows.Close()
	if err := crows.Err(); err != nil {
		return nil, fmt.Errorf("export campaigns: %w", err)
	}
	for i := range f.Campaigns {
		c := &f.Campaigns[i]
		var auds []int64
		if err := db.NewRaw(`SELECT audience_id FROM campaign_audiences WHERE campaign_id = ? ORDER BY audience_id`, c.ID).Scan(ctx, &auds); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("export campaign audiences: %w", err)
		}
		for _, a := range auds {
			c.Audiences = append(c.Audiences, audName[a])
		}
		if err := db.NewRaw(`SELECT position_id, logo, title, body, cta, url, banner_url FROM creatives WHERE campaign_id = ? ORDER BY position_id`, c.ID).
			Scan(ctx, &c.Creatives); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("export creatives: %w", err)
		}
		goals, err := readGoals(ctx, db, c.ID)
		if err != nil {
			return nil, err
		}
		c.Goals = goals
	}
	return f, nil
}

// ExportCampaign returns campaign id with the audiences it names, as an
// import file (ErrNotFound when there is no such campaign).
func ExportCampaign(ctx context.Context, db bun.IDB, id int64) (*File, error) {
	f, err := Export(ctx, db)
	if err != nil {
		return nil, err
	}
	for _, c := range f.Campaigns {
		if c.ID != id {
			continue
		}
		one := File{Campaigns: []CampaignSpec{c}, Audiences: []AudienceSpec{}}
		for _, aud := range f.Audiences {
			if slices.Contains(c.Audiences, aud.Name) {
				one.Audiences = append(one.Audiences, aud)
			}
		}
		return &one, nil
	}
	return nil, fmt.Errorf("campaign %d: %w", id, ErrNotFound)
}

// nonEmpty is s, or nil when it is empty.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
