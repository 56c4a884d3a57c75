package engagement_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/campaigns"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/engagement"
)

// TestAdminAPI drives the admin API of the real server: scope checks,
// import with validation, export of one campaign, pause/resume as seen by
// /campaign, and the report built by the engagement_reports job.
func TestAdminAPI(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	admin := adminKey(t, e)
	as := func(key string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	}
	alice := addr(t, "osmo", key20(1))
	file := fmt.Sprintf(`{"audiences": [{"name": "alice", "kind": "addresses", "addresses": [%q]}],
	 "campaigns": [{"owner": "acme", "name": "launch", "start_date": %q, "end_date": %q, "audiences": ["alice"],
	   "creatives": [{"position_id": "keplr_home", "title": "Hi", "url": "https://acme.example/"}],
	   "goals": [{"kind": "event", "event": "open_position"}]}]}`, alice, day(-1), day(5))

	for _, c := range []struct {
		name    string
		key     string
		method  string
		path    string
		body    string
		status  int
		problem string
	}{
		{"no key", "", "GET", "/admin/campaigns", "", 401, "API key is required"},
		{"all-scope key is not admin", e.sk, "GET", "/admin/campaigns", "", 403, "admin scope"},
		{"publishable key", e.pk, "GET", "/admin/campaigns", "", 403, "admin scope"},
		{"bad id", admin, "GET", "/admin/campaigns/x/report", "", 400, "positive campaign id"},
		{"unknown campaign", admin, "POST", "/admin/campaigns/999/pause", "", 404, "campaign 999"},
		{"not JSON", admin, "POST", "/admin/campaigns", "{", 400, "not a campaigns file"},
		{"unknown field", admin, "POST", "/admin/campaigns", `{"campaignz": []}`, 400, "unknown field"},
		{"goal on an unconfigured chain", admin, "POST", "/admin/campaigns", strings.Replace(file, `{"kind": "event", "event": "open_position"}`,
			`{"kind": "onchain", "chain": "nochain-1", "msg_type": "/x.MsgY"}`, 1), 400, `goals[0].chain: \"nochain-1\" is not a configured chain`},
		{"bad goal", admin, "POST", "/admin/campaigns", strings.Replace(file, `"event": "open_position"`, `"event": ""`, 1), 400, "goals[0].event"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{"Content-Type": "application/json"}
			if c.key != "" {
				h = as(c.key)
			}
			resp, b := e.do(t, c.method, c.path, strings.NewReader(c.body), h)
			if resp.StatusCode != c.status || !strings.Contains(string(b), c.problem) ||
				resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
		})
	}
	if n := e.count(t, `SELECT count(*) FROM campaigns`); n != 0 {
		t.Fatalf("refused imports wrote %d campaigns", n)
	}

	resp, b := e.do(t, "POST", "/admin/campaigns", strings.NewReader(file), as(admin))
	var imported struct {
		Audiences int     `json:"audiences"`
		Campaigns []int64 `json:"campaigns"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &imported) != nil || imported.Audiences != 1 || len(imported.Campaigns) != 1 {
		t.Fatalf("import: %d %s", resp.StatusCode, b)
	}
	id := imported.Campaigns[0]

	// An address-list audience larger than the 32 KB event limit imports
	// (the admin API's limit is 16 MiB): 1,000 addresses, ~48 KB.
	var many []string
	for i := range 1000 {
		raw := key20(7)
		raw[0], raw[1] = byte(i>>8), byte(i)
		many = append(many, fmt.Sprintf("%q", addr(t, "osmo", raw)))
	}
	big := fmt.Sprintf(`{"audiences": [{"name": "many", "kind": "addresses", "addresses": [%s]}]}`, strings.Join(many, ","))
	if len(big) < 40<<10 {
		t.Fatalf("the big file holds only %d bytes", len(big))
	}
	if resp, b := e.do(t, "POST", "/admin/campaigns", strings.NewReader(big), as(admin)); resp.StatusCode != 200 {
		t.Errorf("a %d-byte import: %d %s", len(big), resp.StatusCode, b)
	}

	resp, b = e.do(t, "GET", fmt.Sprintf("/admin/campaigns/%d", id), nil, as(admin))
	var one engagement.File
	if resp.StatusCode != 200 || json.Unmarshal(b, &one) != nil || len(one.Campaigns) != 1 || one.Campaigns[0].Name != "launch" ||
		len(one.Audiences) != 1 || one.Audiences[0].Addresses[0] != "0x"+strings.Repeat("01", 20) ||
		fmt.Sprint(one.Campaigns[0].Goals) != fmt.Sprint([]engagement.GoalSpec{{Kind: "event", Event: "open_position"}}) {
		t.Fatalf("get: %d %s", resp.StatusCode, b)
	}
	if resp, b := e.do(t, "GET", fmt.Sprintf("/admin/campaigns/%d/report", id), nil, as(admin)); resp.StatusCode != 404 || !strings.Contains(string(b), "engagement_reports") {
		t.Errorf("report before the job: %d %s", resp.StatusCode, b)
	}

	shown := func() int {
		_, b := e.do(t, "GET", "/campaign/"+alice+"?position_id=keplr_home", nil, as(e.sk))
		var out []campaignAnswer
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("campaign: %s", b)
		}
		return len(out)
	}
	if shown() != 1 {
		t.Fatal("active campaign not shown")
	}
	if resp, b := e.do(t, "POST", fmt.Sprintf("/admin/campaigns/%d/pause", id), nil, as(admin)); resp.StatusCode != 200 || shown() != 0 {
		t.Fatalf("pause: %d %s", resp.StatusCode, b)
	}
	if resp, b := e.do(t, "POST", fmt.Sprintf("/admin/campaigns/%d/resume", id), nil, as(admin)); resp.StatusCode != 200 || shown() != 1 {
		t.Fatalf("resume: %d %s", resp.StatusCode, b)
	}

	// Two views (none while paused), one click, one converting event through the click; the report counts them.
	q := fmt.Sprintf("/click?url=https://acme.example/&address=%s&campaign_id=%d&audience_id=%d&position_id=keplr_home",
		alice, id, e.count(t, `SELECT id FROM audiences WHERE name = 'alice'`))
	resp, _ = e.do(t, "GET", q, nil, nil)
	clickID := strings.TrimPrefix(resp.Header.Get("Location"), "https://acme.example/?click_id=")
	if resp.StatusCode != 302 || !strings.HasPrefix(clickID, "clk_") {
		t.Fatalf("click: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	ev := fmt.Sprintf(`{"name":"open_position","identity":{"type":"address","id":%q},"timestamp":%d,"meta":{"click_id":%q},"attributes":{"amount_usd":1250.5}}`,
		alice, now.UnixMilli(), clickID)
	if resp, b := e.do(t, "POST", "/track", strings.NewReader(ev), as(e.sk)); resp.StatusCode != 200 {
		t.Fatalf("track: %d %s", resp.StatusCode, b)
	}
	sched, err := aggregator.New(e.db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil,
		campaigns.Website{Now: func() time.Time { return now }}, campaigns.Report{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	resp, b = e.do(t, "GET", fmt.Sprintf("/admin/campaigns/%d/report", id), nil, as(admin))
	var rep engagement.Report
	if resp.StatusCode != 200 || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("report: %d %s", resp.StatusCode, b)
	}
	want := engagement.Report{CampaignID: id, Impressions: 2, Clicks: 1, CTR: ptr("0.5000"), WebsiteConversions: 1, ConversionValueUSD: "1250.5",
		UniqueWallets: 1, ConvertingWallets: 1, ComputedAt: now}
	if wb, _ := json.Marshal(want); strings.TrimSpace(string(b)) != string(wb) {
		t.Errorf("report\n got %s\nwant %s", b, wb)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", resp.Header.Get("Cache-Control"))
	}

	// The admin operations are in the route table: documented in the
	// engagement group's OpenAPI document (tag admin) and observed.
	resp, b = e.do(t, "GET", "/openapi.json", nil, nil)
	var doc struct {
		Paths map[string]map[string]struct {
			Tags []string `json:"tags"`
		} `json:"paths"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("openapi: %d %s", resp.StatusCode, b)
	}
	for _, c := range [][2]string{{"/admin/campaigns", "post"}, {"/admin/campaigns/{id}/report", "get"}, {"/admin/campaigns/{id}/pause", "post"}} {
		if tags := doc.Paths[c[0]][c[1]].Tags; fmt.Sprint(tags) != "[admin]" {
			t.Errorf("openapi %s %s: tags %v, want [admin]", c[1], c[0], tags)
		}
	}
	_, b = e.do(t, "GET", "/metrics", nil, nil)
	for _, want := range []string{`chainlens_api_requests_total{code="200",group="engagement",operation="GET /admin/campaigns/{id}/report"} 1`,
		`chainlens_api_requests_total{code="401",group="engagement",operation="GET /admin/campaigns"} 1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestCreativeURLSchemesAreNormalised: a scheme in any case is the same
// scheme (RFC 3986), so a creative URL written HTTPS:// or Https:// is
// stored, answered and clicked as https:// instead of failing the
// database's check (a 500 before).
func TestCreativeURLSchemesAreNormalised(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	admin := adminKey(t, e)
	h := map[string]string{"Authorization": "Bearer " + admin, "Content-Type": "application/json"}
	for i, c := range []struct{ url, logo, want, wantLogo string }{
		{"HTTPS://acme.example/Launch?x=Y", "Http://cdn.example/l.png", "https://acme.example/Launch?x=Y", "http://cdn.example/l.png"},
		{"Https://acme.example/", "", "https://acme.example/", ""},
		{"https://acme.example/", "", "https://acme.example/", ""},
	} {
		logo := ""
		if c.logo != "" {
			logo = fmt.Sprintf(`, "logo": %q`, c.logo)
		}
		file := fmt.Sprintf(`{"audiences": [{"name": "all%d", "kind": "global"}],
		 "campaigns": [{"owner": "acme", "name": "launch %d", "start_date": %q, "end_date": %q, "audiences": ["all%d"],
		   "creatives": [{"position_id": "keplr_home", "title": "Hi", "url": %q%s}],
		   "goals": [{"kind": "event", "event": "open_position"}]}]}`, i, i, day(-1), day(5), i, c.url, logo)
		resp, b := e.do(t, "POST", "/admin/campaigns", strings.NewReader(file), h)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.url, resp.StatusCode, b)
		}
		var got struct {
			URL, Logo string
		}
		if err := e.db.NewRaw("SELECT url, logo FROM creatives c JOIN campaigns k ON k.id = c.campaign_id WHERE k.name = ?",
			fmt.Sprintf("launch %d", i)).Scan(ctx, &got.URL, &got.Logo); err != nil {
			t.Fatal(err)
		}
		if got.URL != c.want || got.Logo != c.wantLogo {
			t.Errorf("%s: stored %q, %q; want %q, %q", c.url, got.URL, got.Logo, c.want, c.wantLogo)
		}
	}
}

// adminKey creates a secret key with the admin scope.
func adminKey(t *testing.T, e *env) string {
	t.Helper()
	k, _, err := apikey.Create(context.Background(), e.db, apikey.Spec{Name: "ops", Kind: apikey.Secret, Scopes: []string{"admin"},
		QuotaCredits: 1000, QuotaPeriod: time.Hour, RatePerSec: 100, RateBurst: 100})
	if err != nil {
		t.Fatal(err)
	}
	return k
}
