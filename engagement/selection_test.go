package engagement_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chainlens/chainlens/engagement"
	"github.com/chainlens/chainlens/internal/apitest"
)

// fixture is the campaign set of the selection and click tests.
type fixture struct {
	alice, aliceOsmo, bob, carol, evm string
	ids                               map[string]int64 // campaign name -> id
	audiences                         map[string]int64 // audience name -> id
}

func creative(pos, url string) engagement.CreativeSpec {
	return engagement.CreativeSpec{PositionID: pos, Logo: "https://cdn.example/logo.png", Title: "t-" + pos, Body: "b", CTA: "Go", URL: url,
		BannerURL: ptr("https://cdn.example/banner.png")}
}

func loadFixture(t *testing.T, e *env) *fixture {
	t.Helper()
	f := &fixture{
		alice:     addr(t, "cosmos", key20(1)),
		aliceOsmo: addr(t, "osmo", key20(1)),
		bob:       addr(t, "osmo", key20(2)),
		carol:     addr(t, "osmo", key20(3)),
		evm:       "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01",
	}
	file := &engagement.File{
		Audiences: []engagement.AudienceSpec{
			{Name: "everyone", Kind: "global"},
			{Name: "alice", Kind: "addresses", Addresses: []string{f.alice}},
			{Name: "bob", Kind: "addresses", Addresses: []string{f.bob}},
			{Name: "evm", Kind: "addresses", Addresses: []string{strings.ToLower(f.evm)}},
			{Name: "rich", Kind: "rule", Rule: json.RawMessage(`{"chain": "osmosis-1", "holds": {"denom": "uosmo", "min_amount": "1000"}}`)},
		},
		Campaigns: []engagement.CampaignSpec{
			{Name: "g-low", Owner: "o", StartDate: day(-10), EndDate: day(10), Audiences: []string{"everyone"},
				Creatives: []engagement.CreativeSpec{creative("keplr_home", "https://g-low.example/"), creative("wallet_home", "https://g-low.example/w")}},
			{Name: "g-high", Owner: "o", Priority: 5, StartDate: day(-5), EndDate: day(10), Audiences: []string{"everyone"},
				Creatives: []engagement.CreativeSpec{creative("keplr_home", "https://g-high.example/?utm_source=wallet")}},
			{Name: "alice-old", Owner: "o", StartDate: day(-20), EndDate: day(10), Audiences: []string{"alice"},
				Creatives: []engagement.CreativeSpec{creative("keplr_home", "https://alice.example/landing?utm_source=wallet")}},
			{Name: "alice-new", Owner: "o", StartDate: day(-1), EndDate: day(10), Audiences: []string{"alice"},
				Creatives: []engagement.CreativeSpec{creative("leap_wallet_home", "https://alice-new.example/")}},
			{Name: "alice-future", Owner: "o", Priority: 100, StartDate: day(1), EndDate: day(10), Audiences: []string{"alice"},
				Creatives: []engagement.CreativeSpec{creative("keplr_home", "https://future.example/")}},
			{Name: "alice-ended", Owner: "o", Priority: 100, StartDate: day(-10), EndDate: now.Format("2006-01-02T15:04:05Z"), Audiences: []string{"alice"},
				Creatives: []engagement.CreativeSpec{creative("keplr_home", "https://ended.example/")}},
			{Name: "alice-paused", Owner: "o", Priority: 100, Status: "paused", StartDate: day(-10), EndDate: day(10), Audiences: []string{"alice"},
				Creatives: []engagement.CreativeSpec{creative("keplr_home", "https://paused.example/")}},
			{Name: "bob-budget", Owner: "o", ImpressionBudget: ptr[int64](2), StartDate: day(-3), EndDate: day(10), Audiences: []string{"bob"},
				Creatives: []engagement.CreativeSpec{creative("keplr_home", "https://bob.example/")}},
			{Name: "bob-noclicks", Owner: "o", Priority: 9, ClickBudget: ptr[int64](0), StartDate: day(-3), EndDate: day(10), Audiences: []string{"bob"},
				Creatives: []engagement.CreativeSpec{creative("leap_wallet_home", "https://bob-noclicks.example/")}},
			{Name: "evm-capped", Owner: "o", FrequencyCap: ptr(2), StartDate: day(-2), EndDate: day(10), Audiences: []string{"evm", "rich"},
				Creatives: []engagement.CreativeSpec{creative("keplr_home", "https://evm.example/#top")}},
		},
	}
	res, err := engagement.Import(context.Background(), e.db, file)
	if err != nil {
		t.Fatal(err)
	}
	f.ids = map[string]int64{}
	for i, c := range file.Campaigns {
		f.ids[c.Name] = res.Campaigns[i]
	}
	f.audiences = map[string]int64{}
	rows, err := e.db.QueryContext(context.Background(), `SELECT name, id FROM audiences`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		var id int64
		if err := rows.Scan(&n, &id); err != nil {
			t.Fatal(err)
		}
		f.audiences[n] = id
	}
	return f
}

type campaignAnswer struct {
	CampaignID   int64  `json:"campaign_id"`
	CampaignName string `json:"campaign_name"`
	AudienceID   int64  `json:"audience_id"`
	AudienceName string `json:"audience_name"`
	Address      string `json:"address"`
	Creatives    struct {
		PositionID string  `json:"position_id"`
		URL        string  `json:"url"`
		BannerURL  *string `json:"banner_url"`
	} `json:"creatives"`
	StartDate string `json:"start_date"`
	EndDate   string `json:"end_date"`
}

// TestSelection runs requests in order (budgets and caps make order matter)
// and checks the exact campaign chosen for each.
func TestSelection(t *testing.T) {
	e := newEnv(t, nil)
	f := loadFixture(t, e)
	single := func(a, pos string) string { return "/campaign/" + url.PathEscape(a) + "?position_id=" + pos }
	multi := func(pos string, as ...string) string {
		return "/campaign/multiple-cointype?position_id=" + pos + "&addresses=" + url.QueryEscape(strings.Join(as, ","))
	}
	cases := []struct {
		name, path   string
		want         string // campaign name, "" = empty array
		wantAddress  string
		wantAudience string
	}{
		{"global picks the highest priority global campaign", single("global", "keplr_home"), "g-high", "global", "everyone"},
		{"specific audience beats a higher-priority global one, across prefixes", single(f.aliceOsmo, "keplr_home"), "alice-old", f.aliceOsmo, "alice"},
		{"same key under its cosmos prefix", single(f.alice, "keplr_home"), "alice-old", f.alice, "alice"},
		{"position selects the creative", single(f.alice, "leap_wallet_home"), "alice-new", f.alice, "alice"},
		{"unknown address falls back to global", single(f.carol, "keplr_home"), "g-high", "global", "everyone"},
		{"global fallback at another position", single(f.carol, "wallet_home"), "g-low", "global", "everyone"},
		{"no creative for the position", single(f.carol, "jumper_home"), "", "", ""},
		{"global never selects address campaigns", single("global", "leap_wallet_home"), "", "", ""},
		{"budget: first view", single(f.bob, "keplr_home"), "bob-budget", f.bob, "bob"},
		{"budget: second view", single(f.bob, "keplr_home"), "bob-budget", f.bob, "bob"},
		{"budget spent: global instead", single(f.bob, "keplr_home"), "g-high", "global", "everyone"},
		{"spent click budget is never selected", single(f.bob, "leap_wallet_home"), "", "", ""},
		{"evm address matched case-insensitively", single(strings.ToUpper(f.evm[:2])+f.evm[2:], "keplr_home"), "evm-capped", "0X" + f.evm[2:], "evm"},
		{"multi: the matching address is answered", multi("keplr_home", f.carol, f.evm, f.aliceOsmo), "evm-capped", f.evm, "evm"},
		{"multi: frequency cap (2 per day) reached, next best", multi("keplr_home", f.carol, f.evm, f.aliceOsmo), "alice-old", f.aliceOsmo, "alice"},
		{"multi: only unknown addresses", multi("keplr_home", f.carol, addr(t, "juno", key20(9))), "g-high", "global", "everyone"},
	}
	for _, c := range cases {
		resp, body := e.do(t, "GET", c.path, nil, map[string]string{"Authorization": "Bearer " + e.sk})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, body)
		}
		var got []campaignAnswer
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s: %v %s", c.name, err, body)
		}
		if c.want == "" {
			if len(got) != 0 {
				t.Errorf("%s: got %s, want []", c.name, body)
			}
			continue
		}
		if len(got) != 1 || got[0].CampaignName != c.want || got[0].CampaignID != f.ids[c.want] || got[0].Address != c.wantAddress ||
			got[0].AudienceName != c.wantAudience || got[0].AudienceID != f.audiences[c.wantAudience] {
			t.Errorf("%s: got %s, want %s for %s via %s", c.name, body, c.want, c.wantAddress, c.wantAudience)
		}
	}
	// One view per returned campaign.
	for name, want := range map[string]int{"g-high": 4, "alice-old": 3, "bob-budget": 2, "evm-capped": 2, "alice-future": 0, "alice-paused": 0, "alice-ended": 0} {
		if n := e.count(t, `SELECT count(*) FROM impressions WHERE campaign_id = ?`, f.ids[name]); n != want {
			t.Errorf("%s: %d views recorded, want %d", name, n, want)
		}
		if n := e.count(t, `SELECT impressions FROM campaigns WHERE id = ?`, f.ids[name]); n != want {
			t.Errorf("%s: counter %d, want %d", name, n, want)
		}
	}
}

func TestCampaignShapeAndErrors(t *testing.T) {
	e := newEnv(t, nil)
	f := loadFixture(t, e)
	auth := map[string]string{"Authorization": "Bearer " + e.sk}
	resp, body := e.do(t, "GET", "/campaign/"+f.alice+"?position_id=keplr_home", nil, auth)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	want := fmt.Sprintf(`[{"campaign_id":%d,"campaign_owner":"o","campaign_name":"alice-old","campaign_topic":"","audience_id":%d,"audience_name":"alice","address":"%s","creatives":{"position_id":"keplr_home","logo":"https://cdn.example/logo.png","title":"t-keplr_home","body":"b","cta":"Go","url":"https://alice.example/landing?utm_source=wallet","banner_url":"https://cdn.example/banner.png"},"start_date":"2026-11-01T12:00:00.000Z","end_date":"2026-12-01T12:00:00.000Z"}]`,
		f.ids["alice-old"], f.audiences["alice"], f.alice)
	if strings.TrimSpace(string(body)) != want {
		t.Errorf("body\n%s\nwant\n%s", body, want)
	}
	_, doc := e.do(t, "GET", "/openapi.json", nil, nil)
	apitest.Validate(t, doc, "GET", "/campaign/"+f.alice+"?position_id=keplr_home", resp, body)
	resp, body = e.do(t, "GET", "/campaign/multiple-cointype?position_id=keplr_home&addresses="+f.alice, nil, auth)
	if resp.StatusCode != 200 {
		t.Fatalf("multiple-cointype: %d %s", resp.StatusCode, body)
	}
	apitest.Validate(t, doc, "GET", "/campaign/multiple-cointype?position_id=keplr_home&addresses="+f.alice, resp, body)
	for _, c := range []struct{ path, field string }{
		{"/campaign/" + f.alice + "?position_id=nowhere", "position_id"},
		{"/campaign/notanaddress?position_id=keplr_home", "address"},
		{"/campaign/" + f.alice, "position_id"},
		{"/campaign/multiple-cointype?position_id=keplr_home&addresses=zzz", "addresses"},
		{"/campaign/multiple-cointype?position_id=keplr_home", "addresses"},
		{"/campaign/multiple-cointype?position_id=keplr_home&addresses=" + strings.Repeat(f.alice+",", 20) + f.bob + "," + strings.Repeat("x,", 20), "addresses"},
	} {
		resp, body := e.do(t, "GET", c.path, nil, auth)
		if resp.StatusCode != 400 || invalidField(body) != c.field {
			t.Errorf("%s: %d %s, want 400 naming %s", c.path, resp.StatusCode, body, c.field)
		}
	}
	// A publishable key may select campaigns from its allowed origin.
	resp, body = e.do(t, "GET", "/campaign/global?position_id=keplr_home", nil, map[string]string{"Authorization": "Bearer " + e.pk, "Origin": "https://site.example"})
	if resp.StatusCode != 200 || !strings.Contains(string(body), "g-high") {
		t.Errorf("publishable: %d %s", resp.StatusCode, body)
	}
}

func TestPauseResumeExportRoundTrip(t *testing.T) {
	e := newEnv(t, nil)
	f := loadFixture(t, e)
	ctx := context.Background()
	auth := map[string]string{"Authorization": "Bearer " + e.sk}
	if err := engagement.SetStatus(ctx, e.db, f.ids["g-high"], "paused"); err != nil {
		t.Fatal(err)
	}
	_, body := e.do(t, "GET", "/campaign/global?position_id=keplr_home", nil, auth)
	if !strings.Contains(string(body), `"g-low"`) {
		t.Errorf("paused g-high still chosen: %s", body)
	}
	if err := engagement.SetStatus(ctx, e.db, f.ids["g-high"], "active"); err != nil {
		t.Fatal(err)
	}
	_, body = e.do(t, "GET", "/campaign/global?position_id=keplr_home", nil, auth)
	if !strings.Contains(string(body), `"g-high"`) {
		t.Errorf("resumed g-high not chosen: %s", body)
	}
	if err := engagement.SetStatus(ctx, e.db, 99999, "paused"); err == nil {
		t.Error("pausing an unknown campaign succeeded")
	}
	exp, err := engagement.Export(ctx, e.db)
	if err != nil {
		t.Fatal(err)
	}
	if len(exp.Campaigns) != len(f.ids) || len(exp.Audiences) != 5 {
		t.Fatalf("export: %d campaigns, %d audiences", len(exp.Campaigns), len(exp.Audiences))
	}
	// Re-importing the export replaces in place: same ids, same selection.
	res, err := engagement.Import(ctx, e.db, exp)
	if err != nil {
		t.Fatal(err)
	}
	if n := e.count(t, `SELECT count(*) FROM campaigns`); n != len(f.ids) || res.Campaigns[1] != f.ids["g-high"] {
		t.Errorf("re-import: %d campaigns, ids %v", n, res.Campaigns)
	}
	_, body = e.do(t, "GET", "/campaign/"+f.aliceOsmo+"?position_id=keplr_home", nil, auth)
	if !strings.Contains(string(body), `"alice-old"`) {
		t.Errorf("after re-import: %s", body)
	}
}

func TestImportValidation(t *testing.T) {
	good := engagement.CampaignSpec{Name: "c", Owner: "o", StartDate: "2026-01-01T00:00:00Z", EndDate: "2026-02-01T00:00:00Z",
		Audiences: []string{"everyone"}, Creatives: []engagement.CreativeSpec{{PositionID: "keplr_home", URL: "https://x.example/"}}}
	for _, c := range []struct {
		name string
		edit func(*engagement.CampaignSpec)
		want string
	}{
		{"bad start", func(c *engagement.CampaignSpec) { c.StartDate = "2026-01-01" }, "campaigns[0].start_date"},
		{"end before start", func(c *engagement.CampaignSpec) { c.EndDate = "2025-01-01T00:00:00Z" }, "campaigns[0].end_date: must be after start_date"},
		{"javascript url", func(c *engagement.CampaignSpec) { c.Creatives[0].URL = "javascript:alert(1)" }, "campaigns[0].creatives[0].url"},
		{"relative url", func(c *engagement.CampaignSpec) { c.Creatives[0].URL = "/x" }, "campaigns[0].creatives[0].url"},
		{"empty position", func(c *engagement.CampaignSpec) { c.Creatives[0].PositionID = " " }, "campaigns[0].creatives[0].position_id: must not be empty"},
		{"unknown audience", func(c *engagement.CampaignSpec) { c.Audiences = []string{"nobody"} }, "campaigns[0].audiences[0]"},
		{"bad status", func(c *engagement.CampaignSpec) { c.Status = "on" }, "campaigns[0].status"},
		{"utm without campaign", func(c *engagement.CampaignSpec) { c.UTM = &engagement.UTM{Source: "keplr"} }, "campaigns[0].utm.campaign: must not be empty"},
		{"utm source too long", func(c *engagement.CampaignSpec) {
			c.UTM = &engagement.UTM{Campaign: "c", Source: strings.Repeat("s", 201)}
		},
			"campaigns[0].utm.source: must be at most 200 characters"},
	} {
		cs := good
		cs.Creatives = append([]engagement.CreativeSpec(nil), good.Creatives...)
		c.edit(&cs)
		f := &engagement.File{Audiences: []engagement.AudienceSpec{{Name: "everyone", Kind: "global"}}, Campaigns: []engagement.CampaignSpec{cs}}
		err := f.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	f := &engagement.File{Audiences: []engagement.AudienceSpec{{Name: "everyone", Kind: "global"}}, Campaigns: []engagement.CampaignSpec{good}}
	if err := f.Validate(); err != nil {
		t.Errorf("good file: %v", err)
	}
}

func TestNormalize(t *testing.T) {
	raw := key20(7)
	a, _ := engagement.Normalize(addr(t, "osmo", raw))
	b, _ := engagement.Normalize(addr(t, "cosmos", raw))
	if a == "" || a != b {
		t.Errorf("cross-prefix: %q vs %q", a, b)
	}
	x, _ := engagement.Normalize("0x0707070707070707070707070707070707070707")
	if x != a {
		t.Errorf("0x spelling of the same bytes: %q vs %q", x, a)
	}
	for _, bad := range []string{"", "global", "osmo1xyz", "0x12", "0xzz07070707070707070707070707070707070707"} {
		if _, err := engagement.Normalize(bad); err == nil {
			t.Errorf("%q normalised", bad)
		}
	}
}
