package engagement_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/aggregator/campaigns"
	"github.com/chainlens/chainlens/engagement"
)

// segmentBody is a request body exactly as a Segment-style browser SDK
// (Numia's Engage SDK: createEngage({app, apiKey}) with page, track,
// identify, alias) sends it to /sdk/track: it builds meta itself (app, the
// page's utm_* parameters without the prefix, the page, the browser), has
// no way to set meta.click_id, and puts anonymousId, userId (after
// identify) and a millisecond timestamp at the top.
func segmentBody(name, attributes, anon, user, pageURL, search, referrer string, at time.Time, messageID string) string {
	userID := ""
	if user != "" {
		userID = fmt.Sprintf(`,"userId":%q`, user)
	}
	path := strings.SplitN(strings.TrimPrefix(strings.TrimPrefix(pageURL, "https://"), "site.example"), "?", 2)[0]
	return fmt.Sprintf(`{"name":%q,"attributes":%s,"meta":{"app":"site","campaign":{},"page":{"path":%q,"referrer":%q,"search":%q,"title":"Site","url":%q},`+
		`"browser":{"userAgent":"Mozilla/5.0 (X11; Linux x86_64)","screenWidth":1280,"screenHeight":800,"language":"en-US","platform":"Linux x86_64","locale":"en-US","timezone":"UTC"},`+
		`"messageId":%q},"timestamp":%d,"anonymousId":%q%s}`,
		name, attributes, path, referrer, search, pageURL, messageID, at.UnixMilli(), anon, userID)
}

// TestSegmentSDKBodies replays, through /sdk/track, the bodies such an SDK
// sends for two visitors: one lands from the campaign's link (the click id
// only in the page URL and search), browses, identifies with a wallet,
// aliases a second one and buys (amount_usd as a string: stored with a
// warning, valued at nothing); the other lands without a click, buys with
// a numeric amount_usd and identifies afterwards. The first converts
// through the click, the second through the wallet's view once identified;
// a second run changes nothing.
func TestSegmentSDKBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	alice, bob, carol := addr(t, "osmo", key20(1)), addr(t, "osmo", key20(2)), addr(t, "osmo", key20(3))
	file := fmt.Sprintf(`{"audiences": [{"name": "all", "kind": "global"}, {"name": "holders", "kind": "addresses", "addresses": [%q]}],
	 "campaigns": [{"owner": "acme", "name": "launch", "start_date": %q, "end_date": %q, "audiences": ["all", "holders"], "attribution_window": "1h",
	   "creatives": [{"position_id": "keplr_home", "title": "Hi", "url": "https://site.example/land"}],
	   "goals": [{"kind": "event", "event": "purchase"}]}]}`, carol, day(-1), day(5))
	id := importLaunch(t, e, file)
	resp, _ := e.do(t, "GET", fmt.Sprintf("/click?url=https://site.example/land&address=global&campaign_id=%d&audience_id=%d&position_id=keplr_home",
		id, e.count(t, `SELECT id FROM audiences WHERE name = 'all'`)), nil, nil)
	landing := resp.Header.Get("Location")
	if resp.StatusCode != 302 || !strings.Contains(landing, "click_id=clk_") {
		t.Fatalf("click: %d %s", resp.StatusCode, landing)
	}
	search := "?" + strings.SplitN(landing, "?", 2)[1]
	if resp, b := e.do(t, "GET", "/campaign/"+carol+"?position_id=keplr_home", nil, map[string]string{"Authorization": "Bearer " + e.sk}); resp.StatusCode != 200 {
		t.Fatalf("view: %d %s", resp.StatusCode, b)
	}
	at := func(m int) time.Time { return now.Add(time.Duration(m) * time.Minute) }
	const v1, v2 = "8c1f0c9e-5f6a-4d0b-9d3e-1a2b3c4d5e6f", "0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f"
	bodies := []string{
		segmentBody("page", `{}`, v1, "", landing, search, "https://wallet.example/", at(1), "m1"),
		segmentBody("page", `{}`, v1, "", "https://site.example/pricing", "", landing, at(3), "m2"),
		segmentBody("identify", fmt.Sprintf(`{"id":%q,"traits":{}}`, alice), v1, alice, "https://site.example/pricing", "", landing, at(4), "m3"),
		segmentBody("alias", fmt.Sprintf(`{"newIdentity":%q}`, bob), v1, alice, "https://site.example/pricing", "", landing, at(5), "m4"),
		segmentBody("purchase", `{"amount_usd":"12.50","sku":"pro"}`, v1, alice, "https://site.example/checkout", "", "https://site.example/pricing", at(6), "m5"),
		segmentBody("page", `{}`, v2, "", "https://site.example/", "", "", at(2), "m6"),
		segmentBody("purchase", `{"amount_usd":40}`, v2, "", "https://site.example/checkout", "", "https://site.example/", at(7), "m7"),
		segmentBody("identify", fmt.Sprintf(`{"id":%q,"traits":{"plan":"pro"}}`, carol), v2, carol, "https://site.example/account", "", "", at(8), "m8"),
	}
	var answers []string
	for _, b := range bodies {
		answers = append(answers, sdkTrack(t, e, b))
	}
	if !strings.Contains(answers[4], `"warnings"`) || !strings.Contains(answers[4], "amount_usd") || strings.Contains(answers[6], "warnings") {
		t.Errorf("answers: string amount_usd %s; numeric %s", answers[4], answers[6])
	}
	run := jobRunner(t, e, campaigns.Website{Now: func() time.Time { return at(30) }})
	run()
	conversions := func() string {
		t.Helper()
		var got []string
		if err := e.db.NewRaw(`SELECT e.anonymous_id || ' ' || v.attribution || ' ' || coalesce(v.address_norm, '-') || ' ' || coalesce(v.value_usd::text, '-')
			FROM conversions v JOIN tracked_events e ON e.id = v.event_id WHERE v.campaign_id = ? ORDER BY e.anonymous_id`, id).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
	aliceNorm, _ := engagement.Normalize(alice)
	carolNorm, _ := engagement.Normalize(carol)
	want := fmt.Sprintf("[%s impression %s 40 %s click %s -]", v2, carolNorm, v1, aliceNorm)
	if got := conversions(); got != want {
		t.Errorf("conversions %s, want %s", got, want)
	}
	run()
	if got := conversions(); got != want {
		t.Errorf("after a second run: %s", got)
	}
	var links []string
	if err := e.db.NewRaw(`SELECT anonymous_id FROM identity_links ORDER BY anonymous_id, identity_norm`).Scan(ctx, &links); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(links) != fmt.Sprintf("[%s %s %s]", v2, v1, v1) {
		t.Errorf("identity links of %v, want v1 to alice and bob, v2 to carol", links)
	}
}
