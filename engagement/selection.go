package engagement

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// ErrUnknownPosition is returned for a position_id that is not a configured placement.
var ErrUnknownPosition = errors.New("unknown position_id")

// Creative is the creatives member of a campaign object.
type Creative struct {
	PositionID string  `json:"position_id"`
	Logo       string  `json:"logo"`
	Title      string  `json:"title"`
	Body       string  `json:"body"`
	CTA        string  `json:"cta"`
	URL        string  `json:"url"`
	BannerURL  *string `json:"banner_url"`
}

// Selected is the campaign object answered by the /campaign endpoints.
type Selected struct {
	CampaignID    int64    `json:"campaign_id"`
	CampaignOwner string   `json:"campaign_owner"`
	CampaignName  string   `json:"campaign_name"`
	CampaignTopic string   `json:"campaign_topic"`
	AudienceID    int64    `json:"audience_id"`
	AudienceName  string   `json:"audience_name"`
	Address       string   `json:"address"`
	Creatives     Creative `json:"creatives"`
	StartDate     JSONTime `json:"start_date"`
	EndDate       JSONTime `json:"end_date"`
}

// JSONTime renders as RFC 3339 UTC with milliseconds, e.g. 2023-09-29T00:00:00.000Z.
type JSONTime time.Time

// MarshalJSON implements json.Marshaler.
func (t JSONTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"`), nil
}

// Query asks for the campaign of one user at one placement.
type Query struct {
	PositionID string
	// Addresses are the user's addresses in the order given; empty, or the
	// single value Global, selects among global campaigns only.
	Addresses []string
	KeyID     int64 // API key asking, 0 when none; recorded with the view
}

// Selector picks campaigns and records their views.
type Selector struct {
	db *bun.DB
}

// NewSelector returns a Selector over db.
func NewSelector(db *bun.DB) *Selector { return &Selector{db: db} }

// Select returns the most relevant fitting campaign (0 or 1 element) for the
// query at time now and records one view of it. A campaign fits when it is
// active, now is in [start_date, end_date), it has a creative for the
// position, one of its audiences contains one of the addresses (or is
// global), its impression and click budgets are not spent and the user has
// seen it fewer than frequency_cap times this UTC day. Ties are broken by:
// address-specific audience over global, higher priority, later start_date,
// earlier address in the query, lower campaign id.
// Addresses must already be valid (see Normalize).
func (s *Selector) Select(ctx context.Context, q Query, now time.Time) ([]Selected, error) {
	ok, err := s.KnownPosition(ctx, q.PositionID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrUnknownPosition
	}
	globalOnly := len(q.Addresses) == 0 || (len(q.Addresses) == 1 && q.Addresses[0] == Global)
	var norm []string
	byNorm := map[string]string{}
	if !globalOnly {
		for _, a := range q.Addresses {
			n, err := Normalize(a)
			if err != nil {
				return nil, fmt.Errorf("address %q: %w", a, err)
			}
			if _, dup := byNorm[n]; !dup {
				byNorm[n] = a
				norm = append(norm, n)
			}
		}
	}
	if norm == nil {
		norm = []string{}
	}
	dayStart := now.UTC().Truncate(24 * time.Hour)
	for attempt := 0; attempt < 5; attempt++ {
		var out []Selected
		err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var (
				sel      Selected
				matched  sql.NullString
				banner   sql.NullString
				start    time.Time
				end      time.Time
				specific bool
			)
			err := tx.QueryRowContext(ctx, `
SELECT c.id, c.owner, c.name, c.topic, a.id, a.name, m.address, c.start_date, c.end_date,
       cr.position_id, cr.logo, cr.title, cr.body, cr.cta, cr.url, cr.banner_url, m.address IS NOT NULL AS specific
FROM campaigns c
JOIN creatives cr ON cr.campaign_id = c.id AND cr.position_id = ?
JOIN campaign_audiences ca ON ca.campaign_id = c.id
JOIN audiences a ON a.id = ca.audience_id
LEFT JOIN LATERAL (
    SELECT am.address, u.ord FROM audience_members am
    JOIN unnest(?::text[]) WITH ORDINALITY AS u(addr, ord) ON u.addr = am.address
    WHERE am.audience_id = a.id AND a.kind <> 'global'
    ORDER BY u.ord LIMIT 1
) m ON true
WHERE c.status = 'active' AND c.start_date <= ? AND ? < c.end_date
  AND ((a.kind = 'global') OR (m.address IS NOT NULL))
  AND (NOT ? OR a.kind = 'global')
  AND (c.impression_budget IS NULL OR c.impressions < c.impression_budget)
  AND (c.click_budget IS NULL OR c.clicks < c.click_budget)
  AND (c.frequency_cap IS NULL OR cardinality(?::text[]) = 0 OR (
      SELECT count(*) FROM impressions i
      WHERE i.campaign_id = c.id AND i.address_norm = ANY(?::text[]) AND i.shown_at >= ?) < c.frequency_cap)
ORDER BY specific DESC, c.priority DESC, c.start_date DESC, m.ord NULLS LAST, c.id
LIMIT 1`,
				q.PositionID, pgdialect.Array(norm), now, now, globalOnly, pgdialect.Array(norm), pgdialect.Array(norm), dayStart,
			).Scan(&sel.CampaignID, &sel.CampaignOwner, &sel.CampaignName, &sel.CampaignTopic, &sel.AudienceID, &sel.AudienceName,
				&matched, &start, &end, &sel.Creatives.PositionID, &sel.Creatives.Logo, &sel.Creatives.Title, &sel.Creatives.Body,
				&sel.Creatives.CTA, &sel.Creatives.URL, &banner, &specific)
			if errors.Is(err, sql.ErrNoRows) {
				out = []Selected{}
				return nil
			}
			if err != nil {
				return fmt.Errorf("select campaign: %w", err)
			}
			sel.StartDate, sel.EndDate = JSONTime(start), JSONTime(end)
			if banner.Valid {
				sel.Creatives.BannerURL = &banner.String
			}
			// The user is counted by the matched address, or by their first
			// address for a global campaign; a global request counts nobody.
			userNorm := ""
			sel.Address = Global
			if specific && matched.Valid {
				userNorm = matched.String
				sel.Address = byNorm[matched.String]
			} else if len(norm) > 0 {
				userNorm = norm[0]
			}
			// Spend the impression budget atomically: a concurrent view may
			// have taken the last one, in which case selection runs again.
			r, err := tx.ExecContext(ctx, `UPDATE campaigns SET impressions = impressions + 1
				WHERE id = ? AND (impression_budget IS NULL OR impressions < impression_budget)`, sel.CampaignID)
			if err != nil {
				return fmt.Errorf("count view: %w", err)
			}
			if n, _ := r.RowsAffected(); n == 0 {
				return nil // out stays nil: retry
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO impressions (campaign_id, audience_id, position_id, address, address_norm, key_id, shown_at)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, sel.CampaignID, sel.AudienceID, q.PositionID, sel.Address, userNorm,
				sql.NullInt64{Int64: q.KeyID, Valid: q.KeyID != 0}, now); err != nil {
				return fmt.Errorf("record view: %w", err)
			}
			out = []Selected{sel}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
	return []Selected{}, nil
}

// KnownPosition reports whether id is a configured placement.
func (s *Selector) KnownPosition(ctx context.Context, id string) (bool, error) {
	var ok bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM engagement_positions WHERE id = ?)`, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("look up position: %w", err)
	}
	return ok, nil
}
