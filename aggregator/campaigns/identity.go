package campaigns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Identity stitching, as Segment does it: a website visitor is anonymous
// (the SDK's anonymousId) until an event carries both that id and a wallet
// (userId: an identify, or any later event). identity_links keeps those
// pairs; an anonymous event is attributed as the wallet's (its views and
// clicks), and when a pair is first seen, the visitor's earlier anonymous
// events within the attribution window are attributed again (once: a
// conversion's key is its campaign, goal and event).

// linkIdentities records the pairs the events carry and returns the
// anonymous ids of the pairs seen for the first time.
func linkIdentities(ctx context.Context, tx bun.Tx, evs []websiteEvent) ([]string, error) {
	type link struct {
		anon, wallet string
		first, last  time.Time
	}
	links := map[[2]string]*link{}
	for _, e := range evs {
		if e.AnonymousID == nil || *e.AnonymousID == "" || e.IdentityNrm == "" {
			continue
		}
		k := [2]string{*e.AnonymousID, e.IdentityNrm}
		l := links[k]
		if l == nil {
			l = &link{anon: k[0], wallet: k[1], first: e.Timestamp, last: e.Timestamp}
			links[k] = l
		}
		l.first, l.last = minTime(l.first, e.Timestamp), maxTime(l.last, e.Timestamp)
	}
	var anons, wallets []string
	var firsts, lasts []time.Time
	for _, l := range links {
		anons, wallets, firsts, lasts = append(anons, l.anon), append(wallets, l.wallet), append(firsts, l.first), append(lasts, l.last)
	}
	if len(anons) == 0 {
		return nil, nil
	}
	var fresh []string
	if err := tx.NewRaw(`INSERT INTO identity_links (anonymous_id, identity_norm, first_seen, last_seen)
		SELECT * FROM unnest(?::text[], ?::text[], ?::timestamptz[], ?::timestamptz[])
		ON CONFLICT (anonymous_id, identity_norm) DO UPDATE SET first_seen = least(identity_links.first_seen, EXCLUDED.first_seen),
			last_seen = greatest(identity_links.last_seen, EXCLUDED.last_seen)
		RETURNING CASE WHEN xmax = 0 THEN anonymous_id END`,
		pgdialect.Array(anons), pgdialect.Array(wallets), pgdialect.Array(firsts), pgdialect.Array(lasts)).Scan(ctx, &fresh); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("identity links: %w", err)
	}
	out := fresh[:0]
	for _, a := range fresh {
		if a != "" {
			out = append(out, a)
		}
	}
	return out, nil
}

// resolveAnonymous gives each event that has only an anonymous id the
// wallet it was last seen with.
func resolveAnonymous(ctx context.Context, tx bun.Tx, evs []websiteEvent) error {
	var anons []string
	for _, e := range evs {
		if e.IdentityNrm == "" && e.AnonymousID != nil {
			anons = append(anons, *e.AnonymousID)
		}
	}
	if len(anons) == 0 {
		return nil
	}
	var rows []struct {
		Anon   string `bun:"anonymous_id"`
		Wallet string `bun:"identity_norm"`
	}
	if err := tx.NewRaw(`SELECT DISTINCT ON (anonymous_id) anonymous_id, identity_norm FROM identity_links
		WHERE anonymous_id = ANY(?::text[]) ORDER BY anonymous_id, last_seen DESC, identity_norm`, pgdialect.Array(anons)).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("wallets of anonymous visitors: %w", err)
	}
	wallet := map[string]string{}
	for _, r := range rows {
		wallet[r.Anon] = r.Wallet
	}
	for i, e := range evs {
		if e.IdentityNrm == "" && e.AnonymousID != nil {
			evs[i].IdentityNrm = wallet[*e.AnonymousID]
		}
	}
	return nil
}

// backfill attributes again the earlier anonymous events of visitors just
// linked to a wallet (anons), within the longest attribution window of an
// event goal; except are the events of this run.
func (j Website) backfill(ctx context.Context, tx bun.Tx, anons, except []string) (int64, error) {
	if len(anons) == 0 {
		return 0, nil
	}
	var windowS int64
	if err := tx.NewRaw(`SELECT coalesce(max(c.attribution_window_s), 0) FROM campaign_goals g JOIN campaigns c ON c.id = g.campaign_id
		WHERE g.kind = 'event'`).Scan(ctx, &windowS); err != nil {
		return 0, fmt.Errorf("attribution windows: %w", err)
	}
	if windowS == 0 {
		return 0, nil
	}
	var evs []websiteEvent
	if err := tx.NewRaw(`SELECT `+websiteEventColumns+` FROM tracked_events
		WHERE anonymous_id = ANY(?::text[]) AND identity_norm = '' AND attributed_at IS NOT NULL AND id <> ALL(?::text[])
			AND timestamp >= ? ORDER BY timestamp`, pgdialect.Array(anons), pgdialect.Array(except),
		j.now().Add(-time.Duration(windowS)*time.Second)).Scan(ctx, &evs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("earlier anonymous events: %w", err)
	}
	if len(evs) == 0 {
		return 0, nil
	}
	if err := resolveAnonymous(ctx, tx, evs); err != nil {
		return 0, err
	}
	return j.convert(ctx, tx, evs)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
