package campaigns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/engagement"
)

// Identity stitching, as Segment does it: a website visitor is anonymous
// (the SDK's anonymousId) until an event carries both that id and a wallet
// (userId: an identify, or any later event). identity_links keeps those
// pairs; an anonymous event is attributed as the wallet's (its views and
// clicks), and when a pair is first seen, the visitor's earlier anonymous
// events within the attribution window are attributed again (once: a
// conversion's key is its campaign, goal and event).

// linkIdentities records the pairs the events carry (an event with both an
// anonymous id and a wallet, and an alias event's new identity) and
// returns the anonymous ids of the pairs seen for the first time. An
// anonymous id linked to maxWallets wallets already gets no more: those
// links are refused and counted in identity_link_refusals.
func linkIdentities(ctx context.Context, tx bun.Tx, evs []websiteEvent, maxWallets int, now time.Time) ([]string, error) {
	type link struct {
		anon, wallet string
		first, last  time.Time
	}
	links := map[[2]string]*link{}
	var order [][2]string // first appearance, so the bound keeps the earliest
	add := func(anon, wallet string, at time.Time) {
		k := [2]string{anon, wallet}
		l := links[k]
		if l == nil {
			l = &link{anon: anon, wallet: wallet, first: at, last: at}
			links[k] = l
			order = append(order, k)
		}
		l.first, l.last = minTime(l.first, at), maxTime(l.last, at)
	}
	for _, e := range evs {
		if e.AnonymousID == nil || *e.AnonymousID == "" {
			continue
		}
		if e.IdentityNrm != "" {
			add(*e.AnonymousID, e.IdentityNrm, e.Timestamp)
		}
		if n, err := engagement.Normalize(e.Alias); e.Alias != "" && err == nil {
			add(*e.AnonymousID, n, e.Timestamp)
		}
	}
	if len(links) == 0 {
		return nil, nil
	}
	refused, err := boundLinks(ctx, tx, links, order, maxWallets)
	if err != nil {
		return nil, err
	}
	if len(refused) > 0 {
		var anons []string
		var counts []int64
		for a, n := range refused {
			anons, counts = append(anons, a), append(counts, n)
		}
		if _, err := tx.NewRaw(`INSERT INTO identity_link_refusals (anonymous_id, refused, last_refused)
			SELECT a, n, ? FROM unnest(?::text[], ?::bigint[]) AS r(a, n)
			ON CONFLICT (anonymous_id) DO UPDATE SET refused = identity_link_refusals.refused + EXCLUDED.refused, last_refused = EXCLUDED.last_refused`,
			now, pgdialect.Array(anons), pgdialect.Array(counts)).Exec(ctx); err != nil {
			return nil, fmt.Errorf("identity link refusals: %w", err)
		}
	}
	var anons, wallets []string
	var firsts, lasts []time.Time
	for _, k := range order {
		l, ok := links[k]
		if !ok {
			continue // refused
		}
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

// boundLinks removes from links the new pairs that would link an anonymous
// id to more than maxWallets wallets (pairs already stored stay), and
// returns how many it removed per anonymous id.
func boundLinks[L any](ctx context.Context, tx bun.Tx, links map[[2]string]L, order [][2]string, maxWallets int) (map[string]int64, error) {
	var anons []string
	seenAnon := map[string]bool{}
	for _, k := range order {
		if !seenAnon[k[0]] {
			seenAnon[k[0]] = true
			anons = append(anons, k[0])
		}
	}
	var stored []struct {
		Anon   string `bun:"anonymous_id"`
		Wallet string `bun:"identity_norm"`
	}
	if err := tx.NewRaw(`SELECT anonymous_id, identity_norm FROM identity_links WHERE anonymous_id = ANY(?::text[])`,
		pgdialect.Array(anons)).Scan(ctx, &stored); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("stored identity links: %w", err)
	}
	has := map[[2]string]bool{}
	count := map[string]int{}
	for _, s := range stored {
		has[[2]string{s.Anon, s.Wallet}] = true
		count[s.Anon]++
	}
	refused := map[string]int64{}
	for _, k := range order {
		if has[k] {
			continue
		}
		if count[k[0]] >= maxWallets {
			delete(links, k)
			refused[k[0]]++
			continue
		}
		count[k[0]]++
	}
	return refused, nil
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
