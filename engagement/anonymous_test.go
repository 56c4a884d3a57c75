package engagement_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/campaigns"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/engagement"
)

// TestAnonymousVisitorConvertsThroughTheLandingClick: a visitor lands from
// a campaign's link (the click id in the landing page's URL) and converts
// later on another page without it: the conversion is attributed to the
// click through the visitor's anonymousId; another visitor's event is not,
// nor one after the attribution window.
func TestAnonymousVisitorConvertsThroughTheLandingClick(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	file := fmt.Sprintf(`{"audiences": [{"name": "all", "kind": "global"}],
	 "campaigns": [{"owner": "acme", "name": "launch", "start_date": %q, "end_date": %q, "audiences": ["all"], "attribution_window": "1h",
	   "creatives": [{"position_id": "keplr_home", "title": "Hi", "url": "https://site.example/land"}],
	   "goals": [{"kind": "event", "event": "signup"}]}]}`, day(-1), day(5))
	id := importLaunch(t, e, file)
	resp, _ := e.do(t, "GET", fmt.Sprintf("/click?url=https://site.example/land&address=global&campaign_id=%d&audience_id=%d&position_id=keplr_home",
		id, e.count(t, `SELECT id FROM audiences WHERE name = 'all'`)), nil, nil)
	loc := resp.Header.Get("Location")
	click := strings.TrimPrefix(loc, "https://site.example/land?click_id=")
	if resp.StatusCode != 302 || !strings.HasPrefix(click, "clk_") {
		t.Fatalf("click: %d %s", resp.StatusCode, loc)
	}
	sdk := func(anon, name string, at time.Time, meta string) string {
		t.Helper()
		return sdkTrack(t, e, fmt.Sprintf(`{"name":%q,"anonymousId":%q,"timestamp":%d,"meta":%s}`, name, anon, at.UnixMilli(), meta))
	}
	sdk("anon-1", "page", now.Add(time.Minute), `{"page":{"url":"`+loc+`"}}`)
	sdk("anon-1", "signup", now.Add(10*time.Minute), `{"page":{"url":"https://site.example/signup"}}`)
	sdk("anon-2", "signup", now.Add(10*time.Minute), `{"page":{"url":"https://site.example/signup"}}`)
	sdk("anon-3", "page", now.Add(time.Minute), `{"page":{"url":"`+loc+`"}}`)
	sdk("anon-3", "signup", now.Add(2*time.Hour), `{}`) // the window has passed since the click

	sched, err := aggregator.New(e.db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, campaigns.Website{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := e.db.NewRaw(`SELECT e.anonymous_id || ' ' || v.attribution FROM conversions v JOIN tracked_events e ON e.id = v.event_id
		WHERE v.campaign_id = ? ORDER BY e.anonymous_id`, id).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[anon-1 click]" {
		t.Errorf("conversions %v, want [anon-1 click]", got)
	}
}

// TestAnonymousVisitorIsStitchedToTheirWallet: a wallet saw the campaign;
// its owner browses the site anonymously, converts, and only then connects
// the wallet (an event with both anonymousId and userId): the earlier
// conversion is attributed to the view through the identity graph, once,
// however often the job runs; a visitor identified in the same batch as
// their conversion is attributed too, and one never identified is not.
func TestAnonymousVisitorIsStitchedToTheirWallet(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	alice, bob := addr(t, "osmo", key20(1)), addr(t, "osmo", key20(2))
	file := fmt.Sprintf(`{"audiences": [{"name": "holders", "kind": "addresses", "addresses": [%q, %q]}],
	 "campaigns": [{"owner": "acme", "name": "launch", "start_date": %q, "end_date": %q, "audiences": ["holders"], "attribution_window": "1h",
	   "creatives": [{"position_id": "keplr_home", "title": "Hi", "url": "https://site.example/land"}],
	   "goals": [{"kind": "event", "event": "signup"}]}]}`, alice, bob, day(-1), day(5))
	id := importLaunch(t, e, file)
	for _, w := range []string{alice, bob} { // both wallets see the campaign in their wallet
		if resp, b := e.do(t, "GET", "/campaign/"+w+"?position_id=keplr_home", nil, map[string]string{"Authorization": "Bearer " + e.sk}); resp.StatusCode != 200 {
			t.Fatalf("view: %d %s", resp.StatusCode, b)
		}
	}
	sdk := func(anon, user, name string, at time.Time) {
		t.Helper()
		userID := ""
		if user != "" {
			userID = fmt.Sprintf(`,"userId":%q`, user)
		}
		sdkTrack(t, e, fmt.Sprintf(`{"name":%q,"anonymousId":%q%s,"timestamp":%d}`, name, anon, userID, at.UnixMilli()))
	}
	run := jobRunner(t, e, campaigns.Website{Now: func() time.Time { return now.Add(time.Hour) }})
	conversions := func() string {
		t.Helper()
		var got []string
		if err := e.db.NewRaw(`SELECT e.anonymous_id || ' ' || v.address_norm || ' ' || v.attribution FROM conversions v JOIN tracked_events e ON e.id = v.event_id
			WHERE v.campaign_id = ? ORDER BY e.anonymous_id`, id).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
	aliceNorm, _ := engagement.Normalize(alice)
	bobNorm, _ := engagement.Normalize(bob)

	sdk("anon-a", "", "signup", now.Add(5*time.Minute))
	sdk("anon-x", "", "signup", now.Add(5*time.Minute)) // never identified
	run()
	if got := conversions(); got != "[]" {
		t.Fatalf("before any identify: %s", got)
	}
	sdk("anon-a", alice, "identify", now.Add(6*time.Minute))
	sdk("anon-b", "", "signup", now.Add(7*time.Minute))
	sdk("anon-b", bob, "identify", now.Add(8*time.Minute)) // same batch as the conversion
	run()
	run()
	want := fmt.Sprintf("[anon-a %s impression anon-b %s impression]", aliceNorm, bobNorm)
	if got := conversions(); got != want {
		t.Errorf("conversions %s, want %s", got, want)
	}
	var links int64
	if err := e.db.NewRaw(`SELECT count(*) FROM identity_links`).Scan(ctx, &links); err != nil || links != 2 {
		t.Errorf("%d identity links (%v), want 2", links, err)
	}
}

// importLaunch imports a campaigns file through the admin API and returns
// the id of its campaign named launch.
func importLaunch(t *testing.T, e *env, file string) int64 {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + adminKey(t, e), "Content-Type": "application/json"}
	if resp, b := e.do(t, "POST", "/admin/campaigns", strings.NewReader(file), h); resp.StatusCode != 200 {
		t.Fatalf("import: %d %s", resp.StatusCode, b)
	}
	return int64(e.count(t, `SELECT id FROM campaigns WHERE name = 'launch'`))
}

// sdkTrack sends body to /sdk/track as the browser SDK does from
// https://site.example and returns the answer; anything but 200 fails t.
func sdkTrack(t *testing.T, e *env, body string) string {
	t.Helper()
	resp, b := e.do(t, "POST", "/sdk/track", strings.NewReader(body),
		map[string]string{"Authorization": "Bearer " + e.pk, "Content-Type": "text/plain;charset=UTF-8", "Origin": "https://site.example"})
	if resp.StatusCode != 200 {
		t.Fatalf("sdk track: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// TestUTMAttribution: a campaign declares the utm values of its links;
// /click adds them to the target (before the click id); a visitor who
// landed with them (in the landing page's URL, or meta.campaign) and
// converts later is attributed to the campaign (utm), one whose source
// differs is not; the values survive export.
func TestUTMAttribution(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	id := importLaunch(t, e, fmt.Sprintf(`{"audiences": [{"name": "all", "kind": "global"}],
	 "campaigns": [{"owner": "acme", "name": "launch", "start_date": %q, "end_date": %q, "audiences": ["all"], "attribution_window": "1h",
	   "utm": {"campaign": "spring sale", "source": "keplr"},
	   "creatives": [{"position_id": "keplr_home", "title": "Hi", "url": "https://site.example/land?utm_medium=banner#top"}],
	   "goals": [{"kind": "event", "event": "signup"}]}]}`, day(-1), day(5)))
	resp, _ := e.do(t, "GET", fmt.Sprintf("/click?url=%s&address=global&campaign_id=%d&audience_id=%d&position_id=keplr_home",
		url.QueryEscape("https://site.example/land?utm_medium=banner#top"), id, e.count(t, `SELECT id FROM audiences WHERE name = 'all'`)), nil, nil)
	if loc := resp.Header.Get("Location"); resp.StatusCode != 302 ||
		!regexp.MustCompile(`^https://site\.example/land\?utm_medium=banner&utm_campaign=spring\+sale&utm_source=keplr&click_id=clk_[0-9A-Z]{26}#top$`).MatchString(loc) {
		t.Fatalf("click: %d %q", resp.StatusCode, loc)
	}
	landing := "https://site.example/land?utm_campaign=spring+sale&utm_source=keplr"
	for _, ev := range []struct {
		anon, name string
		at         time.Duration
		meta       string
	}{
		{"anon-u", "page", time.Minute, `{"page":{"url":"` + landing + `"}}`},
		{"anon-u", "signup", 10 * time.Minute, `{"page":{"url":"https://site.example/signup"}}`},
		{"anon-v", "page", time.Minute, `{"page":{"url":"https://site.example/land?utm_campaign=spring+sale&utm_source=other"}}`},
		{"anon-v", "signup", 10 * time.Minute, `{}`},
		{"anon-w", "signup", 10 * time.Minute, `{"campaign":{"name":"spring sale","source":"keplr","medium":"banner"}}`},
		{"anon-z", "page", time.Minute, `{"page":{"url":"` + landing + `"}}`},
		{"anon-z", "signup", 2 * time.Hour, `{}`}, // after the window
	} {
		sdkTrack(t, e, fmt.Sprintf(`{"name":%q,"anonymousId":%q,"timestamp":%d,"meta":%s}`, ev.name, ev.anon, now.Add(ev.at).UnixMilli(), ev.meta))
	}
	sched, err := aggregator.New(e.db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, campaigns.Website{Now: func() time.Time { return now.Add(3 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := e.db.NewRaw(`SELECT e.anonymous_id || ' ' || v.attribution || ' ' || to_char(v.exposed_at - ?::timestamptz, 'MI') FROM conversions v
		JOIN tracked_events e ON e.id = v.event_id WHERE v.campaign_id = ? ORDER BY e.anonymous_id`, now, id).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if want := "[anon-u utm 01 anon-w utm 10]"; fmt.Sprint(got) != want {
		t.Errorf("conversions %v, want %s", got, want)
	}
	_, b := e.do(t, "GET", "/admin/campaigns/export", nil, map[string]string{"Authorization": "Bearer " + adminKey(t, e)})
	if !strings.Contains(string(b), `"utm":{"campaign":"spring sale","source":"keplr"}`) {
		t.Errorf("export lacks the utm values: %s", b)
	}
}

// An alias event (the SDK's alias(newIdentity)) links the visitor to the
// new wallet like an identify does: the earlier anonymous conversion is
// credited to that wallet's view. A visitor linked to as many wallets as
// the bound allows (a shared computer) gets no more links: the refused
// ones are counted, and running the job again counts nothing twice.
func TestAliasLinksAndTheVisitorBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	alice, bob, carol := addr(t, "osmo", key20(1)), addr(t, "osmo", key20(2)), addr(t, "osmo", key20(3))
	file := fmt.Sprintf(`{"audiences": [{"name": "holders", "kind": "addresses", "addresses": [%q, %q, %q]}],
	 "campaigns": [{"owner": "acme", "name": "launch", "start_date": %q, "end_date": %q, "audiences": ["holders"], "attribution_window": "1h",
	   "creatives": [{"position_id": "keplr_home", "title": "Hi", "url": "https://site.example/land"}],
	   "goals": [{"kind": "event", "event": "signup"}]}]}`, alice, bob, carol, day(-1), day(5))
	id := importLaunch(t, e, file)
	if resp, b := e.do(t, "GET", "/campaign/"+carol+"?position_id=keplr_home", nil, map[string]string{"Authorization": "Bearer " + e.sk}); resp.StatusCode != 200 {
		t.Fatalf("view: %d %s", resp.StatusCode, b)
	}
	run := jobRunner(t, e, campaigns.Website{Now: func() time.Time { return now.Add(time.Hour) }, MaxWalletsPerVisitor: 2})
	at := func(m int) int64 { return now.Add(time.Duration(m) * time.Minute).UnixMilli() }
	sdkTrack(t, e, fmt.Sprintf(`{"name":"signup","anonymousId":"anon-c","timestamp":%d}`, at(5)))
	run()
	sdkTrack(t, e, fmt.Sprintf(`{"name":"alias","anonymousId":"anon-c","attributes":{"newIdentity":%q},"timestamp":%d}`, carol, at(6)))
	// A shared computer: three people identify on it in turn.
	for i, w := range []string{alice, bob, carol} {
		sdkTrack(t, e, fmt.Sprintf(`{"name":"identify","anonymousId":"anon-s","userId":%q,"timestamp":%d}`, w, at(10+i)))
	}
	run()
	run()
	carolNorm, _ := engagement.Normalize(carol)
	var got []string
	if err := e.db.NewRaw(`SELECT e.anonymous_id || ' ' || v.address_norm || ' ' || v.attribution FROM conversions v JOIN tracked_events e ON e.id = v.event_id
		WHERE v.campaign_id = ? ORDER BY e.anonymous_id`, id).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("[anon-c %s impression]", carolNorm); fmt.Sprint(got) != want {
		t.Errorf("conversions %v, want %s", got, want)
	}
	var links []string
	if err := e.db.NewRaw(`SELECT anonymous_id FROM identity_links ORDER BY anonymous_id, first_seen`).Scan(ctx, &links); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(links) != "[anon-c anon-s anon-s]" {
		t.Errorf("identity links %v, want anon-c once and anon-s twice", links)
	}
	var refused int64
	if err := e.db.NewRaw(`SELECT refused FROM identity_link_refusals WHERE anonymous_id = 'anon-s'`).Scan(ctx, &refused); err != nil || refused != 1 {
		t.Errorf("refused %d (%v), want 1", refused, err)
	}
}

// jobRunner returns a function that runs the jobs once, failing t on an
// error.
func jobRunner(t *testing.T, e *env, jobs ...aggregator.Job) func() {
	t.Helper()
	sched, err := aggregator.New(e.db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, jobs...)
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if err := sched.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
