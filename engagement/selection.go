package engagement

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
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
	// slots holds one token per selection that may run at once (at most
	// selectorConns); idle holds the selection's own connections not in
	// use, each with the statement prepared and a generic plan forced (see
	// selConn). A selection takes a token, then an idle connection or a new
	// one, and gives both back (a broken connection is closed instead).
	slots chan struct{}
	idle  chan *selConn
}

// selectorConns is the most connections the Selector keeps for itself
// (taken from the database pool); a decision takes well under a
// millisecond of one.
const selectorConns = 4

// NewSelector returns a Selector over db.
func NewSelector(db *bun.DB) *Selector {
	return &Selector{db: db, slots: make(chan struct{}, selectorConns), idle: make(chan *selConn, selectorConns)}
}

// selConn is a connection with selectQuery prepared under
// plan_cache_mode = force_generic_plan. Left to choose, Postgres kept
// re-planning the statement for address queries (a custom plan costs 2.3 ms
// of planning and looks cheaper than the generic plan on paper), tripling
// the decision time; the generic plan is the one the statement is written
// for (a lateral primary-key probe per candidate).
type selConn struct {
	conn *sql.Conn
	stmt *sql.Stmt
}

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
	globalOnly := len(q.Addresses) == 0 || (len(q.Addresses) == 1 && q.Addresses[0] == Global)
	norm, spelled := []string{}, []string{}
	if !globalOnly {
		seen := map[string]bool{}
		for _, a := range q.Addresses {
			n, err := Normalize(a)
			if err != nil {
				return nil, fmt.Errorf("address %q: %w", a, err)
			}
			if !seen[n] {
				seen[n] = true
				norm, spelled = append(norm, n), append(spelled, a)
			}
		}
	}
	firstNorm := ""
	if len(norm) > 0 {
		firstNorm = norm[0]
	}
	normJSON, err := json.Marshal(norm)
	if err != nil {
		return nil, err
	}
	spelledJSON, err := json.Marshal(spelled)
	if err != nil {
		return nil, err
	}
	dayStart := now.UTC().Truncate(24 * time.Hour)
	retried := false
	for attempt := 0; attempt < 5; attempt++ {
		var (
			sel      Selected
			banner   sql.NullString
			start    time.Time
			end      time.Time
			recorded int
		)
		// One statement, one round trip: pick the campaign, spend one view
		// of its budget and record the view. The pick's candidates come from
		// the user's memberships (index on audience_members.address) and
		// the global audiences, so the cost follows the user's audiences,
		// not the number of campaigns. A view is analytics, not money: its
		// commit does not wait for the WAL flush (a Postgres crash may forget
		// the last few hundred milliseconds of views; the data stays
		// consistent).
		c, err := s.acquire(ctx)
		if err != nil {
			return nil, err
		}
		err = c.stmt.QueryRowContext(ctx,
			string(normJSON), string(spelledJSON), globalOnly, Global, firstNorm, q.PositionID, now, dayStart,
			sql.NullInt64{Int64: q.KeyID, Valid: q.KeyID != 0},
		).Scan(&sel.CampaignID, &sel.CampaignOwner, &sel.CampaignName, &sel.CampaignTopic, &sel.AudienceID, &sel.AudienceName,
			&start, &end, &sel.Creatives.PositionID, &sel.Creatives.Logo, &sel.Creatives.Title, &sel.Creatives.Body,
			&sel.Creatives.CTA, &sel.Creatives.URL, &banner, &sel.Address, &recorded)
		s.release(c, err)
		if errors.Is(err, sql.ErrNoRows) {
			// No campaign fits; an unknown placement is the caller's error.
			ok, err := s.KnownPosition(ctx, q.PositionID)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, ErrUnknownPosition
			}
			return []Selected{}, nil
		}
		if err != nil && !retried && ctx.Err() == nil {
			// Its connection was closed (release); a connection lost while
			// idle, say to a Postgres restart, fails once, not the request.
			retried = true
			attempt--
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("select campaign: %w", err)
		}
		if recorded == 0 {
			continue // the last view of the budget went to a concurrent request
		}
		sel.StartDate, sel.EndDate = JSONTime(start), JSONTime(end)
		if banner.Valid {
			sel.Creatives.BannerURL = &banner.String
		}
		return []Selected{sel}, nil
	}
	return []Selected{}, nil
}

// pickColumns are the columns of a picked campaign.
const pickColumns = `c.id, c.owner, c.name, c.topic, cand.audience_id, cand.audience_name, c.start_date, c.end_date,
           cr.position_id, cr.logo, cr.title, cr.body, cr.cta, cr.url, cr.banner_url`

// fits joins a candidate's campaign and creative and keeps the campaigns
// that can be shown now: a lateral probe per candidate (OFFSET 0 keeps the
// planner from flattening it into a hash join over every campaign in the
// generic plan of the prepared statement).
const fits = `
    CROSS JOIN LATERAL (SELECT * FROM campaigns WHERE id = cand.campaign_id OFFSET 0) c
    JOIN creatives cr ON cr.campaign_id = c.id AND cr.position_id = $6
    WHERE c.status = 'active' AND c.start_date <= $7 AND $7 < c.end_date
      AND (c.impression_budget IS NULL OR c.impressions < c.impression_budget)
      AND (c.click_budget IS NULL OR c.clicks < c.click_budget)
      AND (c.frequency_cap IS NULL OR $5 = '' OR (
          SELECT count(*) FROM impressions i
          WHERE i.campaign_id = c.id AND i.address_norm IN (SELECT addr FROM u) AND i.shown_at >= $8) < c.frequency_cap)`

// selectQuery is the statement of Select, prepared once per connection
// with a generic plan forced (see selConn): planning it costs more than
// running it.
const selectQuery = `
WITH cfg AS (
    SELECT set_config('synchronous_commit', 'off', true) AS v
), u AS (
    SELECT n.addr, sp.spelled, n.ord FROM jsonb_array_elements_text($1::jsonb) WITH ORDINALITY AS n(addr, ord)
    JOIN jsonb_array_elements_text($2::jsonb) WITH ORDINALITY AS sp(spelled, ord2) ON sp.ord2 = n.ord
), m AS (
    SELECT DISTINCT ON (am.audience_id) am.audience_id, am.address, u.spelled, u.ord
    FROM u JOIN audience_members am ON am.address = u.addr
    ORDER BY am.audience_id, u.ord
), spec AS (
    -- Index probes per membership (OFFSET 0, as in fits): the generic plan
    -- takes the address list for 100 rows and would otherwise hash-join
    -- every campaign_audiences row.
    SELECT ca.campaign_id, a.id AS audience_id, a.name AS audience_name, m.address, m.spelled, m.ord
    FROM m
    CROSS JOIN LATERAL (SELECT id, name FROM audiences WHERE id = m.audience_id AND kind <> 'global' OFFSET 0) a
    CROSS JOIN LATERAL (SELECT campaign_id FROM campaign_audiences WHERE audience_id = m.audience_id OFFSET 0) ca
    WHERE NOT $3
), glob AS (
    SELECT ca.campaign_id, a.id AS audience_id, a.name AS audience_name
    FROM audiences a JOIN campaign_audiences ca ON ca.audience_id = a.id
    WHERE a.kind = 'global'
), pick_spec AS (
    -- The user is counted by the matched address.
    SELECT ` + pickColumns + `, cand.spelled AS answered, cand.address AS user_norm
    FROM spec cand ` + fits + `
    ORDER BY c.priority DESC, c.start_date DESC, cand.ord, c.id
    LIMIT 1
), pick_glob AS (
    -- Global campaigns only when no address-specific one fits; the user
    -- is counted by their first address (a global request counts nobody).
    SELECT ` + pickColumns + `, $4 AS answered, $5 AS user_norm
    FROM glob cand ` + fits + `
      AND NOT EXISTS (SELECT 1 FROM pick_spec)
    ORDER BY c.priority DESC, c.start_date DESC, c.id
    LIMIT 1
), pick AS (
    SELECT * FROM pick_spec UNION ALL SELECT * FROM pick_glob
), spend AS (
    -- Spend the budget atomically: a concurrent view may have taken the
    -- last one, and then nothing is recorded and selection runs again.
    UPDATE campaigns c SET impressions = c.impressions + 1 FROM pick
    WHERE c.id = pick.id AND (c.impression_budget IS NULL OR c.impressions < c.impression_budget)
    RETURNING c.id
), view AS (
    INSERT INTO impressions (campaign_id, audience_id, position_id, address, address_norm, key_id, shown_at)
    SELECT pick.id, pick.audience_id, pick.position_id, pick.answered, pick.user_norm, $9, $7
    FROM pick JOIN spend ON spend.id = pick.id
    RETURNING 1
)
SELECT pick.id, pick.owner, pick.name, pick.topic, pick.audience_id, pick.audience_name, pick.start_date, pick.end_date,
       pick.position_id, pick.logo, pick.title, pick.body, pick.cta, pick.url, pick.banner_url, pick.answered,
       (SELECT count(*) FROM view) AS recorded
FROM pick, cfg`

// acquire waits for a selection slot, then returns an idle selection
// connection or opens one.
func (s *Selector) acquire(ctx context.Context) (*selConn, error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for a selection connection: %w", ctx.Err())
	}
	select {
	case c := <-s.idle:
		return c, nil
	default:
	}
	c, err := s.dial(ctx)
	if err != nil {
		<-s.slots
		return nil, err
	}
	return c, nil
}

func (s *Selector) dial(ctx context.Context) (*selConn, error) {
	var err error
	// A pooled connection may turn out dead on first use (after a Postgres
	// restart: a bad connection, a reset): it is discarded and another
	// taken, up to once per connection the pool can hold.
	for range max(3, s.db.DB.Stats().MaxOpenConnections+1) {
		var c *selConn
		if c, err = s.dialOnce(ctx); err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

func (s *Selector) dialOnce(ctx context.Context) (*selConn, error) {
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("campaign selection connection: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("campaign selection connection: %w", err)
	}
	stmt, err := conn.PrepareContext(ctx, selectQuery)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("prepare campaign selection: %w", err)
	}
	return &selConn{conn: conn, stmt: stmt}, nil
}

// release gives c and its slot back. When c's last use failed for another
// reason than finding no campaign it is closed, and so are the idle ones:
// connections are mostly lost together (a Postgres restart), and the next
// selection opens a new one rather than trying each dead one in turn.
func (s *Selector) release(c *selConn, err error) {
	defer func() { <-s.slots }()
	if err == nil || errors.Is(err, sql.ErrNoRows) {
		s.idle <- c
		return
	}
	c.close()
	for {
		select {
		case idle := <-s.idle:
			idle.close()
		default:
			return
		}
	}
}

func (c *selConn) close() {
	_ = c.stmt.Close()
	_ = c.conn.Close()
}

// KnownPosition reports whether id is a configured placement.
func (s *Selector) KnownPosition(ctx context.Context, id string) (bool, error) {
	var ok bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM engagement_positions WHERE id = ?)`, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("look up position: %w", err)
	}
	return ok, nil
}
