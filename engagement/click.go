package engagement

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// ClickDedupeWindow is how long a repeated click (same campaign, address and
// IP) is answered with the first click instead of being recorded again.
const ClickDedupeWindow = time.Hour

// Click failures the handler maps to statuses.
var (
	ErrURLNotStored     = errors.New("url is not a creative url of this campaign")
	ErrPositionNotFound = errors.New("the campaign has no creative at this position")
	ErrAudienceNotFound = errors.New("the campaign does not target this audience")
)

// ClickRequest is one click to record.
type ClickRequest struct {
	CampaignID int64
	AudienceID int64
	PositionID string
	Address    string
	URL        string
	IP         string
	UserAgent  string
	Referrer   string
	// Record is false for HEAD requests and link-preview bots: the target
	// is checked but nothing is written.
	Record bool
}

// Clicks checks and records clicks.
type Clicks struct {
	db   *bun.DB
	mu   sync.Mutex
	salt []byte // loaded on first use
}

// NewClicks returns a click recorder over db.
func NewClicks(db *bun.DB) *Clicks { return &Clicks{db: db} }

// hashIP returns sha256(salt || ip) with the installation's salt.
func (c *Clicks) hashIP(ctx context.Context, ip string) ([]byte, error) {
	c.mu.Lock()
	salt := c.salt
	if salt == nil {
		if err := c.db.QueryRowContext(ctx, `SELECT value FROM engagement_secrets WHERE name = 'ip_salt'`).Scan(&salt); err != nil {
			c.mu.Unlock()
			return nil, fmt.Errorf("load ip salt: %w", err)
		}
		c.salt = salt
	}
	c.mu.Unlock()
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(ip))
	return h.Sum(nil), nil
}

// Redirect is where a click is sent: its target with the campaign's utm
// values and the click id.
func (c *Clicks) Redirect(ctx context.Context, r ClickRequest, now time.Time) (string, error) {
	var utm struct{ campaign, source, medium sql.NullString }
	err := c.db.QueryRowContext(ctx, `SELECT utm_campaign, utm_source, utm_medium FROM campaigns WHERE id = ?`, r.CampaignID).
		Scan(&utm.campaign, &utm.source, &utm.medium)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("look up campaign: %w", err)
	}
	id, err := c.record(ctx, r, now)
	if err != nil {
		return "", err
	}
	target := AppendUTM(r.URL, UTM{Campaign: utm.campaign.String, Source: utm.source.String, Medium: utm.medium.String})
	return AppendClickID(target, id), nil
}

// AppendUTM adds the campaign's utm values to the query of u (before any
// fragment) as utm_campaign, utm_source and utm_medium, each unless empty
// or already in u (the target's own values win).
func AppendUTM(u string, utm UTM) string {
	base, frag, hasFrag := strings.Cut(u, "#")
	_, query, _ := strings.Cut(base, "?")
	have, _ := url.ParseQuery(query)
	for _, p := range []struct{ name, value string }{{"utm_campaign", utm.Campaign}, {"utm_source", utm.Source}, {"utm_medium", utm.Medium}} {
		if p.value == "" || have.Has(p.name) {
			continue
		}
		switch {
		case !strings.Contains(base, "?"):
			base += "?"
		case !strings.HasSuffix(base, "?") && !strings.HasSuffix(base, "&"):
			base += "&"
		}
		base += p.name + "=" + url.QueryEscape(p.value)
	}
	if hasFrag {
		base += "#" + frag
	}
	return base
}

// record checks that the url is stored for the campaign (which Redirect
// found) and records the click unless the same campaign, address and IP
// clicked within the last hour. It returns the click id to append to the
// url ("" when not recorded).
func (c *Clicks) record(ctx context.Context, r ClickRequest, now time.Time) (string, error) {
	var urlOK, posOK, audOK bool
	if err := c.db.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM creatives WHERE campaign_id = ? AND url = ?),
		EXISTS (SELECT 1 FROM creatives WHERE campaign_id = ? AND position_id = ?),
		EXISTS (SELECT 1 FROM campaign_audiences WHERE campaign_id = ? AND audience_id = ?)`,
		r.CampaignID, r.URL, r.CampaignID, r.PositionID, r.CampaignID, r.AudienceID).Scan(&urlOK, &posOK, &audOK); err != nil {
		return "", fmt.Errorf("check click: %w", err)
	}
	switch {
	case !urlOK:
		return "", ErrURLNotStored
	case !posOK:
		return "", ErrPositionNotFound
	case !audOK:
		return "", ErrAudienceNotFound
	}
	if !r.Record {
		return "", nil
	}
	ipHash, err := c.hashIP(ctx, r.IP)
	if err != nil {
		return "", err
	}
	// A click from a global placement (address=global) is nobody's: it is
	// stored as global with no wallet, as a global view is, so no report
	// counts "global" as a wallet and no wallet's conversion matches it.
	address, norm := r.Address, normalizeLoose(r.Address)
	if strings.EqualFold(strings.TrimSpace(address), Global) {
		address, norm = Global, ""
	}
	var id string
	err = c.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Serialise clicks of the same user on the same campaign so that two
		// concurrent clicks are recorded once.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?::text || '|' || ?::text || '|' || encode(?::bytea, 'hex'), 0))`,
			r.CampaignID, norm, ipHash); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, `SELECT click_id FROM clicks WHERE campaign_id = ? AND address_norm = ? AND ip_hash = ?
			AND clicked_at > ? ORDER BY clicked_at DESC LIMIT 1`, r.CampaignID, norm, ipHash, now.Add(-ClickDedupeWindow)).Scan(&id)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		id = "clk_" + newULID(now)
		if _, err := tx.ExecContext(ctx, `INSERT INTO clicks (click_id, campaign_id, audience_id, position_id, address, address_norm, url,
			ip_hash, user_agent, referrer, clicked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, r.CampaignID, r.AudienceID, r.PositionID, address, norm, r.URL, ipHash, Clip(r.UserAgent, 512), Clip(r.Referrer, 2048), now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE campaigns SET clicks = clicks + 1 WHERE id = ?`, r.CampaignID)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("record click: %w", err)
	}
	return id, nil
}

// previewBots are User-Agent fragments of link-preview fetchers, whose
// requests are redirected but not counted as clicks.
var previewBots = []string{
	"slackbot", "slack-imgproxy", "twitterbot", "facebookexternalhit", "facebookcatalog", "discordbot",
	"telegrambot", "whatsapp", "linkedinbot", "skypeuripreview", "embedly", "pinterest", "redditbot",
	"applebot", "googlebot", "bingbot", "vkshare", "w3c_validator", "iframely", "mastodon", "bitlybot",
}

// IsPreviewBot reports whether a User-Agent is a link-preview bot or crawler.
func IsPreviewBot(ua string) bool {
	ua = strings.ToLower(ua)
	for _, b := range previewBots {
		if strings.Contains(ua, b) {
			return true
		}
	}
	return false
}

// Clip cuts s to at most n bytes on a rune boundary.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// AppendClickID appends click_id=id to the query of u (before any
// fragment), with ? or & as needed; an empty id leaves u unchanged.
func AppendClickID(u, id string) string {
	if id == "" {
		return u
	}
	base, frag, hasFrag := strings.Cut(u, "#")
	switch {
	case !strings.Contains(base, "?"):
		base += "?"
	case !strings.HasSuffix(base, "?") && !strings.HasSuffix(base, "&"):
		base += "&"
	}
	base += "click_id=" + id
	if hasFrag {
		base += "#" + frag
	}
	return base
}
