package campaigns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/engagement"
)

// EventsPerRun bounds the website events one run attributes.
const EventsPerRun = 10000

// TxLookupWindow is how long a website event's tx hash is looked for in
// the indexed chains before it is marked not_found.
const TxLookupWindow = 24 * time.Hour

// Website attributes /track and /sdk/track events to campaigns with an
// event goal of that name: through the click the event names
// (engagement.ClickIDOf: meta.click_id or the landing page's URL, else the
// latest one an earlier event of the same anonymousId carried within the
// window), else through a view or click of the campaign by the
// event's address within the attribution window before the event. It first
// checks the tx hash an event carries (attributes.tx_hash) against the
// indexed chains. Events are marked attributed_at once processed, so no
// watermark can skip an event committed late.
type Website struct {
	// Now is the wall clock (tests fix it).
	Now func() time.Time
	// Batch bounds the events one run looks at (0: EventsPerRun).
	Batch int
	// MaxWalletsPerVisitor bounds the wallets one anonymous id is linked
	// to (config engagement.max_wallets_per_visitor; 0: 10).
	MaxWalletsPerVisitor int
}

func (j Website) batch() int {
	if j.Batch > 0 {
		return j.Batch
	}
	return EventsPerRun
}

// Name is engagement_website_conversions.
func (Website) Name() string { return "engagement_website_conversions" }

// Version is the version of the job's rows (see aggregator.Job).
func (Website) Version() string { return "1" }

// Tables: website conversions are attributed once, and the tracked events
// marked as attributed; nothing is owned.
func (Website) Tables() aggregator.Tables {
	return aggregator.Tables{Shared: []string{"conversions", "tracked_events", "identity_links", "identity_link_refusals"}}
}

func (j Website) maxWallets() int {
	if j.MaxWalletsPerVisitor > 0 {
		return j.MaxWalletsPerVisitor
	}
	return 10
}

func (j Website) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

// Run verifies pending tx hashes, then attributes unattributed events.
func (j Website) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	verified, err := j.verify(ctx, tx)
	if err != nil {
		return wm, 0, err
	}
	n, err := j.attribute(ctx, tx)
	return wm, verified + n, err
}

type pendingTx struct {
	ID          string    `bun:"id"`
	IdentityNrm string    `bun:"identity_norm"`
	Hash        string    `bun:"tx_hash"`
	ReceivedAt  time.Time `bun:"received_at"`
}

// verify looks up the tx hash of the pending events least recently looked
// at (checked, else received; a batch per run): found and successful and signed (cosmos) or sent
// (EVM) by the event's identity is verified; found otherwise is failed or
// signer_mismatch; not found within TxLookupWindow of receipt is not_found;
// not found yet, it is looked up again after every other pending event.
func (j Website) verify(ctx context.Context, tx bun.Tx) (int64, error) {
	var pend []pendingTx
	if err := tx.NewRaw(`SELECT id, identity_norm, attributes->>'tx_hash' AS tx_hash, received_at FROM tracked_events
		WHERE tx_status IS NULL AND (attributes->>'tx_hash') IS NOT NULL ORDER BY coalesce(tx_checked_at, received_at), id LIMIT ?`,
		j.batch()).Scan(ctx, &pend); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("pending tx hashes: %w", err)
	}
	var n int64
	var again []string // still not found: looked up again after the others
	for _, p := range pend {
		status, chainID, height, err := lookupTx(ctx, tx, p.Hash, p.IdentityNrm)
		if err != nil {
			return n, err
		}
		if status == "" {
			if j.now().Sub(p.ReceivedAt) < TxLookupWindow {
				again = append(again, p.ID)
				continue
			}
			status = "not_found"
		}
		if _, err := tx.NewRaw(`UPDATE tracked_events SET tx_status = ?, tx_chain_id = ?, tx_height = ? WHERE id = ?`,
			status, nullStr(chainID), nullInt(height), p.ID).Exec(ctx); err != nil {
			return n, fmt.Errorf("event %s tx status: %w", p.ID, err)
		}
		if status == "verified" {
			if _, err := tx.NewRaw(`UPDATE conversions SET verified = true WHERE event_id = ?`, p.ID).Exec(ctx); err != nil {
				return n, fmt.Errorf("event %s conversions: %w", p.ID, err)
			}
		}
		n++
	}
	if len(again) > 0 {
		if _, err := tx.NewRaw(`UPDATE tracked_events SET tx_checked_at = ? WHERE id = ANY(?::text[])`, j.now(), pgdialect.Array(again)).Exec(ctx); err != nil {
			return n, fmt.Errorf("pending tx hashes checked: %w", err)
		}
	}
	return n, nil
}

func nullStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullInt(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

// lookupTx finds hash among the indexed cosmos txs (upper-case hex) and
// EVM ERC-20 transfers (0x lower-case hex); status "" when not indexed.
func lookupTx(ctx context.Context, tx bun.Tx, hash, identity string) (status, chainID string, height int64, err error) {
	h := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(hash), "0x"), "0X")
	if h == "" {
		return "", "", 0, nil
	}
	var ctxs []struct {
		ChainID string   `bun:"chain_id"`
		Height  int64    `bun:"height"`
		Code    int64    `bun:"code"`
		Signers []string `bun:"signers,array"`
	}
	if err := tx.NewRaw(`SELECT chain_id, height, code, signers FROM txs WHERE hash = ? ORDER BY height LIMIT 1`, strings.ToUpper(h)).
		Scan(ctx, &ctxs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", "", 0, fmt.Errorf("look up tx %s: %w", hash, err)
	}
	if len(ctxs) > 0 {
		t := ctxs[0]
		if t.Code != 0 {
			return "failed", t.ChainID, t.Height, nil
		}
		for _, s := range t.Signers {
			if n, err := engagement.Normalize(s); err == nil && n == identity {
				return "verified", t.ChainID, t.Height, nil
			}
		}
		return "signer_mismatch", t.ChainID, t.Height, nil
	}
	var etxs []struct {
		ChainID string `bun:"chain_id"`
		Height  int64  `bun:"height"`
		Sender  string `bun:"sender"`
	}
	if err := tx.NewRaw(`SELECT chain_id, height, sender FROM erc20_transfers WHERE tx_hash = ? ORDER BY log_index`, "0x"+strings.ToLower(h)).
		Scan(ctx, &etxs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", "", 0, fmt.Errorf("look up evm tx %s: %w", hash, err)
	}
	if len(etxs) == 0 {
		return "", "", 0, nil
	}
	for _, t := range etxs {
		if strings.TrimPrefix(t.Sender, "0x") == identity {
			return "verified", t.ChainID, t.Height, nil
		}
	}
	return "signer_mismatch", etxs[0].ChainID, etxs[0].Height, nil
}

type websiteEvent struct {
	ID          string    `bun:"id"`
	Name        string    `bun:"name"`
	IdentityNrm string    `bun:"identity_norm"`
	ClickID     *string   `bun:"click_id"`
	AnonymousID *string   `bun:"anonymous_id"`
	Timestamp   time.Time `bun:"timestamp"`
	// UTMCampaign, UTMSource and UTMMedium are the event's utm values, or
	// (inheritUTM) those of the visitor's landing event, at UTMAt.
	UTMCampaign *string   `bun:"utm_campaign"`
	UTMSource   *string   `bun:"utm_source"`
	UTMMedium   *string   `bun:"utm_medium"`
	UTMAt       time.Time `bun:"-"`
	Verified    bool      `bun:"verified"`
	// AmountUSD is the event's attributes.amount_usd (the standard events'
	// value), when a number of at least 0: the conversion's value.
	AmountUSD *string `bun:"amount_usd"`
	// Alias is the new identity of an alias event (attributes.newIdentity,
	// as the SDKs send it), as written.
	Alias string `bun:"alias"`
}

type eventGoal struct {
	ID         int64  `bun:"id"`
	CampaignID int64  `bun:"campaign_id"`
	EventName  string `bun:"event_name"`
	WindowS    int64  `bun:"attribution_window_s"`
	// UTMCampaign, UTMSource, UTMMedium are the campaign's utm values.
	UTMCampaign *string `bun:"utm_campaign"`
	UTMSource   *string `bun:"utm_source"`
	UTMMedium   *string `bun:"utm_medium"`
}

// utmMatches reports whether e carries the utm values of g's campaign:
// the same campaign, and the source and medium the campaign declares.
func (g eventGoal) utmMatches(e websiteEvent) bool {
	same := func(want, got *string) bool { return want == nil || (got != nil && *got == *want) }
	return g.UTMCampaign != nil && e.UTMCampaign != nil && *e.UTMCampaign == *g.UTMCampaign &&
		same(g.UTMSource, e.UTMSource) && same(g.UTMMedium, e.UTMMedium)
}

// websiteEventColumns are the columns of tracked_events read as a
// websiteEvent.
const websiteEventColumns = `id, name, identity_norm, click_id, anonymous_id, timestamp, utm_campaign, utm_source, utm_medium,
			CASE WHEN name = 'alias' AND jsonb_typeof(attributes->'newIdentity') = 'string' THEN attributes->>'newIdentity' ELSE '' END AS alias,
			coalesce(tx_status = 'verified', false) AS verified,
			CASE WHEN jsonb_typeof(attributes->'amount_usd') = 'number' AND (attributes->>'amount_usd')::numeric >= 0
				THEN (attributes->>'amount_usd')::numeric::text END AS amount_usd`

func (j Website) attribute(ctx context.Context, tx bun.Tx) (int64, error) {
	var evs []websiteEvent
	if err := tx.NewRaw(`SELECT `+websiteEventColumns+`
		FROM tracked_events WHERE attributed_at IS NULL ORDER BY received_at LIMIT ?`, j.batch()).Scan(ctx, &evs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("unattributed events: %w", err)
	}
	if len(evs) == 0 {
		return 0, nil
	}
	linked, err := linkIdentities(ctx, tx, evs, j.maxWallets(), j.now())
	if err != nil {
		return 0, err
	}
	if err := resolveAnonymous(ctx, tx, evs); err != nil {
		return 0, err
	}
	n, err := j.convert(ctx, tx, evs)
	if err != nil {
		return 0, err
	}
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	if _, err := tx.NewRaw(`UPDATE tracked_events SET attributed_at = ? WHERE id = ANY(?::text[])`, j.now(), pgdialect.Array(ids)).Exec(ctx); err != nil {
		return 0, fmt.Errorf("mark events attributed: %w", err)
	}
	back, err := j.backfill(ctx, tx, linked, ids)
	return n + back, err
}

// convert matches events with the event goals of their names and stores
// the conversions (each once: a conversion's key is its campaign, goal and
// event).
func (j Website) convert(ctx context.Context, tx bun.Tx, evs []websiteEvent) (int64, error) {
	names := map[string]bool{}
	var nameList []string
	for _, e := range evs {
		if !names[e.Name] {
			names[e.Name] = true
			nameList = append(nameList, e.Name)
		}
	}
	var goals []eventGoal
	if err := tx.NewRaw(`SELECT g.id, g.campaign_id, g.event_name, c.attribution_window_s, c.utm_campaign, c.utm_source, c.utm_medium FROM campaign_goals g
		JOIN campaigns c ON c.id = g.campaign_id WHERE g.kind = 'event' AND g.event_name = ANY(?::text[]) ORDER BY g.id`,
		pgdialect.Array(nameList)).Scan(ctx, &goals); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("event goals: %w", err)
	}
	if len(goals) == 0 {
		return 0, nil
	}
	convs, err := j.match(ctx, tx, evs, goals)
	if err != nil {
		return 0, err
	}
	return insertConversions(ctx, tx, convs)
}

// inheritTouches gives an event what the latest earlier event of the same
// anonymous visitor within window carried and it lacks: the click id (the
// landing page's event had it in its URL; the visitor's later events, on
// other pages, do not) and the utm values, with that event's time as the
// touch. An event with its own utm values is its own touch.
func inheritTouches(ctx context.Context, tx bun.Tx, evs []websiteEvent, window time.Duration) error {
	var ids []string
	at := map[string]int{}
	for i, e := range evs {
		if e.UTMCampaign != nil {
			evs[i].UTMAt = e.Timestamp
		}
		if e.AnonymousID != nil && (e.ClickID == nil || e.UTMCampaign == nil) {
			ids = append(ids, e.ID)
			at[e.ID] = i
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var rows []struct {
		ID       string     `bun:"id"`
		ClickID  *string    `bun:"click_id"`
		Campaign *string    `bun:"utm_campaign"`
		Source   *string    `bun:"utm_source"`
		Medium   *string    `bun:"utm_medium"`
		At       *time.Time `bun:"utm_at"`
	}
	if err := tx.NewRaw(`SELECT t.id, c.click_id, u.utm_campaign, u.utm_source, u.utm_medium, u.timestamp AS utm_at FROM tracked_events t
		LEFT JOIN LATERAL (SELECT click_id FROM tracked_events p
			WHERE p.anonymous_id = t.anonymous_id AND p.click_id IS NOT NULL AND p.anonymous_id IS NOT NULL
				AND p.timestamp <= t.timestamp AND p.timestamp >= t.timestamp - ?0::interval
			ORDER BY p.timestamp DESC LIMIT 1) c ON t.click_id IS NULL
		LEFT JOIN LATERAL (SELECT utm_campaign, utm_source, utm_medium, timestamp FROM tracked_events p
			WHERE p.anonymous_id = t.anonymous_id AND p.utm_campaign IS NOT NULL AND p.anonymous_id IS NOT NULL
				AND p.timestamp <= t.timestamp AND p.timestamp >= t.timestamp - ?0::interval
			ORDER BY p.timestamp DESC LIMIT 1) u ON t.utm_campaign IS NULL
		WHERE t.id = ANY(?1::text[])`, fmt.Sprintf("%d seconds", int64(window/time.Second)), pgdialect.Array(ids)).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("earlier touches of anonymous visitors: %w", err)
	}
	for _, r := range rows {
		e := &evs[at[r.ID]]
		if e.ClickID == nil && r.ClickID != nil {
			e.ClickID = r.ClickID
		}
		if e.UTMCampaign == nil && r.Campaign != nil && r.At != nil {
			e.UTMCampaign, e.UTMSource, e.UTMMedium, e.UTMAt = r.Campaign, r.Source, r.Medium, *r.At
		}
	}
	return nil
}

func (j Website) match(ctx context.Context, tx bun.Tx, evs []websiteEvent, goals []eventGoal) ([]conversion, error) {
	campaignSet := map[int64]bool{}
	var campaigns []int64
	var maxWindow time.Duration
	for _, g := range goals {
		if !campaignSet[g.CampaignID] {
			campaignSet[g.CampaignID] = true
			campaigns = append(campaigns, g.CampaignID)
		}
		maxWindow = max(maxWindow, time.Duration(g.WindowS)*time.Second)
	}
	if err := inheritTouches(ctx, tx, evs, maxWindow); err != nil {
		return nil, err
	}
	// The clicks the events name.
	var clickIDs []string
	addrSet := map[string]bool{}
	var addrs []string
	from, to := evs[0].Timestamp, evs[0].Timestamp
	for _, e := range evs {
		if e.ClickID != nil {
			clickIDs = append(clickIDs, *e.ClickID)
		}
		if e.IdentityNrm != "" && !addrSet[e.IdentityNrm] {
			addrSet[e.IdentityNrm] = true
			addrs = append(addrs, e.IdentityNrm)
		}
		if e.Timestamp.Before(from) {
			from = e.Timestamp
		}
		if e.Timestamp.After(to) {
			to = e.Timestamp
		}
	}
	type click struct {
		ID          string    `bun:"click_id"`
		CampaignID  int64     `bun:"campaign_id"`
		AddressNorm string    `bun:"address_norm"`
		ClickedAt   time.Time `bun:"clicked_at"`
	}
	clicks := map[string]click{}
	if len(clickIDs) > 0 {
		var cs []click
		if err := tx.NewRaw(`SELECT click_id, campaign_id, address_norm, clicked_at FROM clicks WHERE click_id = ANY(?::text[])`,
			pgdialect.Array(clickIDs)).Scan(ctx, &cs); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("clicks of events: %w", err)
		}
		for _, c := range cs {
			clicks[c.ID] = c
		}
	}
	exp, err := loadExposures(ctx, tx, campaigns, addrs, from.Add(-maxWindow), to)
	if err != nil {
		return nil, err
	}
	// An event is matched with the goals of its name only (10,000
	// campaigns make as many goals; a batch holds as many events).
	byName := map[string][]eventGoal{}
	for _, g := range goals {
		byName[g.EventName] = append(byName[g.EventName], g)
	}
	var out []conversion
	for _, e := range evs {
		for _, g := range byName[e.Name] {
			window := time.Duration(g.WindowS) * time.Second
			c := conversion{CampaignID: g.CampaignID, GoalID: g.ID, SourceKey: e.ID, Source: "website", ConvertedAt: e.Timestamp,
				EventID: ptr(e.ID), Verified: e.Verified, AddressNorm: e.IdentityNrm, ValueUSD: e.AmountUSD}
			if e.ClickID != nil {
				if cl, ok := clicks[*e.ClickID]; ok && cl.CampaignID == g.CampaignID &&
					!e.Timestamp.Before(cl.ClickedAt) && !e.Timestamp.After(cl.ClickedAt.Add(window)) {
					c.Attribution, c.ExposedAt = "click", cl.ClickedAt
					if c.AddressNorm == "" {
						c.AddressNorm = cl.AddressNorm
					}
					out = append(out, c)
					continue
				}
			}
			if g.utmMatches(e) && !e.Timestamp.Before(e.UTMAt) && !e.Timestamp.After(e.UTMAt.Add(window)) {
				c.Attribution, c.ExposedAt = "utm", e.UTMAt
				out = append(out, c)
				continue
			}
			if e.IdentityNrm == "" {
				continue
			}
			if at, attribution, ok := exp.attribute(g.CampaignID, e.IdentityNrm, e.Timestamp, window, 0); ok {
				c.Attribution, c.ExposedAt = attribution, at
				out = append(out, c)
			}
		}
	}
	return out, nil
}
