package engagement_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chainlens/chainlens/engagement"
)

func clickPath(f *fixture, campaign, audience, position, target, address string) string {
	q := url.Values{}
	q.Set("url", target)
	q.Set("address", address)
	q.Set("campaign_id", strconv.FormatInt(f.ids[campaign], 10))
	q.Set("audience_id", strconv.FormatInt(f.audiences[audience], 10))
	q.Set("position_id", position)
	return "/click?" + q.Encode()
}

var clickIDRe = regexp.MustCompile(`^clk_[0-9A-HJKMNP-TV-Z]{26}$`)

func TestClickRedirectsAndRecords(t *testing.T) {
	e := newEnv(t, nil)
	f := loadFixture(t, e)
	target := "https://alice.example/landing?utm_source=wallet"
	path := clickPath(f, "alice-old", "alice", "keplr_home", target, f.aliceOsmo)
	ua := map[string]string{"User-Agent": "Mozilla/5.0 (X11; Linux x86_64)", "Referer": "https://wallet.example/home"}

	// No Authorization header: browsers follow this link.
	resp, body := e.do(t, "GET", path, nil, ua)
	if resp.StatusCode != http.StatusFound || len(body) != 0 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	loc := resp.Header.Get("Location")
	prefix := target + "&click_id="
	if len(loc) <= len(prefix) || loc[:len(prefix)] != prefix || !clickIDRe.MatchString(loc[len(prefix):]) {
		t.Fatalf("Location %q, want %s<click id>", loc, prefix)
	}
	clickID := loc[len(prefix):]
	var (
		campaign, audience    int64
		pos, address, norm, u string
		gotUA, ref            string
		ipHash                []byte
	)
	if err := e.db.QueryRowContext(context.Background(), `SELECT campaign_id, audience_id, position_id, address, address_norm, url, user_agent, referrer, ip_hash
		FROM clicks WHERE click_id = ?`, clickID).Scan(&campaign, &audience, &pos, &address, &norm, &u, &gotUA, &ref, &ipHash); err != nil {
		t.Fatal(err)
	}
	wantNorm, _ := engagement.Normalize(f.alice)
	if campaign != f.ids["alice-old"] || audience != f.audiences["alice"] || pos != "keplr_home" || address != f.aliceOsmo || norm != wantNorm ||
		u != target || gotUA != ua["User-Agent"] || ref != ua["Referer"] || len(ipHash) != 32 || bytes.Contains(ipHash, []byte("127.0.0.1")) {
		t.Errorf("row: %d %d %s %s %s %s %q %q %x", campaign, audience, pos, address, norm, u, gotUA, ref, ipHash)
	}

	// Same campaign, address and IP within the hour: redirected with the first click id, recorded once.
	resp, _ = e.do(t, "GET", path, nil, ua)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != loc {
		t.Errorf("repeat: %d %s, want %s", resp.StatusCode, resp.Header.Get("Location"), loc)
	}
	if n := e.count(t, `SELECT count(*) FROM clicks`); n != 1 {
		t.Errorf("%d clicks recorded, want 1", n)
	}
	if n := e.count(t, `SELECT clicks FROM campaigns WHERE id = ?`, f.ids["alice-old"]); n != 1 {
		t.Errorf("click counter %d, want 1", n)
	}

	// A url without a query gets ?click_id, and a fragment stays last.
	resp, _ = e.do(t, "GET", clickPath(f, "evm-capped", "evm", "keplr_home", "https://evm.example/#top", f.evm), nil, ua)
	if loc := resp.Header.Get("Location"); resp.StatusCode != 302 || !regexp.MustCompile(`^https://evm\.example/\?click_id=clk_[0-9A-Z]{26}#top$`).MatchString(loc) {
		t.Errorf("fragment url: %d %q", resp.StatusCode, loc)
	}

	// HEAD and link-preview bots are redirected but not recorded.
	before := e.count(t, `SELECT count(*) FROM clicks`)
	other := clickPath(f, "g-high", "everyone", "keplr_home", "https://g-high.example/?utm_source=wallet", f.carol)
	resp, _ = e.do(t, "HEAD", other, nil, ua)
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://g-high.example/?utm_source=wallet" {
		t.Errorf("HEAD: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, bot := range []string{"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Twitterbot/1.0",
		"facebookexternalhit/1.1", "Mozilla/5.0 (compatible; Discordbot/2.0)", "TelegramBot (like TwitterBot)", "WhatsApp/2.23", "LinkedInBot/1.0"} {
		resp, _ = e.do(t, "GET", other, nil, map[string]string{"User-Agent": bot})
		if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://g-high.example/?utm_source=wallet" {
			t.Errorf("%s: %d %q", bot, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if n := e.count(t, `SELECT count(*) FROM clicks`); n != before {
		t.Errorf("HEAD/bots recorded %d clicks", n-before)
	}

	// A click from a global placement is nobody's: stored as global with no
	// wallet, however the placement spells it.
	for _, spelled := range []string{"global", "GLOBAL"} {
		resp, _ = e.do(t, "GET", clickPath(f, "g-high", "everyone", "keplr_home", "https://g-high.example/?utm_source=wallet", spelled),
			nil, map[string]string{"User-Agent": "Mozilla/5.0", "X-Forwarded-For": "198.51.100." + strconv.Itoa(len(spelled))})
		if resp.StatusCode != 302 {
			t.Fatalf("global click: %d", resp.StatusCode)
		}
	}
	var globals []string
	if err := e.db.NewRaw(`SELECT address || '/' || address_norm FROM clicks WHERE campaign_id = ? ORDER BY clicked_at`, f.ids["g-high"]).
		Scan(context.Background(), &globals); err != nil || len(globals) == 0 {
		t.Fatal(globals, err)
	}
	for _, g := range globals {
		if g != "global/" {
			t.Errorf("global click stored as %q, want address global and no wallet", g)
		}
	}
}

func TestClickRefusals(t *testing.T) {
	e := newEnv(t, nil)
	f := loadFixture(t, e)
	cases := []struct {
		name, path string
		status     int
		field      string
	}{
		{"open redirect", clickPath(f, "alice-old", "alice", "keplr_home", "https://evil.example/", f.alice), 400, "url"},
		{"another campaign's url", clickPath(f, "alice-old", "alice", "keplr_home", "https://g-high.example/?utm_source=wallet", f.alice), 400, "url"},
		{"url differing in query", clickPath(f, "alice-old", "alice", "keplr_home", "https://alice.example/landing?utm_source=evil", f.alice), 400, "url"},
		{"position without creative", clickPath(f, "alice-old", "alice", "jumper_home", "https://alice.example/landing?utm_source=wallet", f.alice), 400, "position_id"},
		{"audience not targeted", clickPath(f, "alice-old", "bob", "keplr_home", "https://alice.example/landing?utm_source=wallet", f.alice), 400, "audience_id"},
		{"unknown campaign", "/click?url=https://x.example/&address=global&campaign_id=987654&audience_id=1&position_id=keplr_home", 404, ""},
		{"malformed campaign", "/click?url=https://x.example/&address=global&campaign_id=abc&audience_id=1&position_id=keplr_home", 400, "campaign_id"},
		{"missing url", fmt.Sprintf("/click?address=global&campaign_id=%d&audience_id=1&position_id=keplr_home", f.ids["g-high"]), 400, "url"},
	}
	for _, c := range cases {
		resp, body := e.do(t, "GET", c.path, nil, nil)
		if resp.StatusCode != c.status || invalidField(body) != c.field || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d %s, want %d naming %q", c.name, resp.StatusCode, body, c.status, c.field)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM clicks`); n != 0 {
		t.Errorf("%d clicks recorded by refused requests", n)
	}
}

func TestAppendClickID(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example":              "https://a.example?click_id=X",
		"https://a.example/p?x=1":        "https://a.example/p?x=1&click_id=X",
		"https://a.example/p?":           "https://a.example/p?click_id=X",
		"https://a.example/p?x=1&":       "https://a.example/p?x=1&click_id=X",
		"https://a.example/p?x=1#frag?y": "https://a.example/p?x=1&click_id=X#frag?y",
	} {
		if got := engagement.AppendClickID(in, "X"); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// TestConcurrentClicksRecordedOnce fires the same click 20 times at once:
// one row, and every redirect carries its click id.
func TestConcurrentClicksRecordedOnce(t *testing.T) {
	e := newEnv(t, nil)
	f := loadFixture(t, e)
	path := clickPath(f, "g-high", "everyone", "keplr_home", "https://g-high.example/?utm_source=wallet", f.carol)
	locs := make(chan string, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := e.do(t, "GET", path, nil, map[string]string{"User-Agent": "Mozilla/5.0"})
			locs <- resp.Header.Get("Location")
		}()
	}
	wg.Wait()
	close(locs)
	first := ""
	for l := range locs {
		if first == "" {
			first = l
		}
		if l != first || !strings.Contains(l, "&click_id=clk_") {
			t.Errorf("Location %q, first %q", l, first)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM clicks`); n != 1 {
		t.Errorf("%d clicks recorded, want 1", n)
	}
}
