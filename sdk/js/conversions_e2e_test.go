package js_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/devnet"
	"github.com/chainlens/chainlens/engagement"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/devnettest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// shop is the landing page of the conversion test: the visitor arrives on
// it from /click (the click id in its URL), browses anonymously, connects
// a wallet and, as a buyer, purchases; a stored attribute of the wrong
// type draws a warning.
var shop = template.Must(template.New("shop").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title></head>
<body><pre id="out">pending</pre>
<script type="module">
import { createEngage } from "/engage.js";
const out = document.getElementById("out");
try {
  const sdk = createEngage({ apiKey: {{.Key}}, baseUrl: {{.API}}, retry: { maxRetries: 2, baseDelayMs: 100 } });
  const results = [];
  results.push(await sdk.page());
  results.push(await sdk.track("browse", { section: "pricing" }));
  results.push(await sdk.identify({{.Wallet}}, {}));
  if ({{.Buyer}} === "yes") {
    results.push(await sdk.track("purchase", { amount_usd: 25 }));
    results.push(await sdk.track("gift_card", { amount_usd: "lots" }));
  }
  out.textContent = JSON.stringify({ results, anonymousId: sdk.anonymousId });
} catch (e) {
  out.textContent = JSON.stringify({ error: String(e) });
}
</script></body></html>`))

// TestBrowserConversions is the engagement flow as users live it, in headless
// Chromium on another loopback origin with a publishable key: a visitor
// arrives through /click, browses anonymously, identifies with a wallet and
// purchases; another arrives through /click, identifies with the wallet of
// an account on a live cosmos-sdk chain and then sends a transfer from it.
// Both conversions land in the campaign's report with their click and
// value, the event with a bad attribute is stored with a warning, and
// running every job again changes no count.
func TestBrowserConversions(t *testing.T) {
	bin := chromium(t)
	js := bundle(t)
	n, ctx, addr := devnettest.Start(t, 4*time.Minute)
	db, _ := testdb.New(t)
	rec := &recorder{}
	// The API believes loopback proxies: the second visitor comes through
	// one, from another address (two visitors behind one address within an
	// hour count as one click).
	apiSrv := startAPIWith(t, db, rec, "api: {trusted_proxies: [127.0.0.1/32]}\n")
	target, err := url.Parse(apiSrv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Forwarded-For", "198.51.100.7")
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(proxied.Close)
	shopSrv, shopOrigin := site(t)
	key, _, err := apikey.Create(ctx, db, apikey.Spec{Name: "shop", Kind: apikey.Publishable, Scopes: []string{"engagement"},
		Origins: []string{shopOrigin}, QuotaCredits: 1 << 30, QuotaPeriod: time.Hour, RatePerSec: 1000, RateBurst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /engage.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(js)
	})
	mux.HandleFunc("GET /shop", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := shop.Execute(w, map[string]string{"Key": key, "API": apiSrv.URL, "Wallet": r.URL.Query().Get("wallet"),
			"Buyer": r.URL.Query().Get("buyer")}); err != nil {
			t.Error(err)
		}
	})
	shopSrv.Config.Handler = mux
	shopSrv.Start()

	chain := config.Chain{ID: n.ChainID(), Kind: "cosmos", RPC: []string{n.RPCURL()}, BatchSize: 20, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: "cosmos", StartHeight: 1}
	landing := shopOrigin + "/shop"
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	f := &engagement.File{
		Audiences: []engagement.AudienceSpec{{Name: "everyone", Kind: "global"}},
		Campaigns: []engagement.CampaignSpec{{Owner: "shop", Name: "launch", StartDate: start.Format(time.RFC3339),
			EndDate: start.Add(48 * time.Hour).Format(time.RFC3339), Audiences: []string{"everyone"}, AttributionWindow: "1h",
			Creatives: []engagement.CreativeSpec{{PositionID: "banner", URL: landing}},
			Goals: []engagement.GoalSpec{{Kind: "event", Event: "purchase"},
				{Kind: "onchain", Chain: chain.ID, MsgType: "/cosmos.bank.v1beta1.MsgSend"}}}},
	}
	if err := f.CheckChains(map[string]string{chain.ID: chain.Kind}); err != nil {
		t.Fatal(err)
	}
	res, err := engagement.Import(ctx, db, f)
	if err != nil {
		t.Fatal(err)
	}
	id := res.Campaigns[0]
	var audience int64
	if err := db.NewRaw(`SELECT id FROM audiences WHERE name = 'everyone'`).Scan(ctx, &audience); err != nil {
		t.Fatal(err)
	}
	profile, err := os.MkdirTemp("", "chainlens-conversions-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	// Each visitor opens the campaign's link: /click redirects to the
	// landing page with the click id (the landing URL carries who they
	// will identify as, for the page script).
	visit := func(name, via, wallet, buyer string) outcome {
		t.Helper()
		target := landing + "?wallet=" + url.QueryEscape(wallet) + "&buyer=" + buyer
		if _, err := db.ExecContext(ctx, `UPDATE creatives SET url = ? WHERE campaign_id = ?`, target, id); err != nil {
			t.Fatal(err)
		}
		click := fmt.Sprintf("%s/click?url=%s&address=global&campaign_id=%d&audience_id=%d&position_id=banner",
			via, url.QueryEscape(target), id, audience)
		return browse(t, bin, filepath.Join(profile, name), click)
	}
	buyer := "osmo1qyqszqgpqyqszqgpqyqszqgpqyqszqgpjnp7du"
	first := visit("buyer", apiSrv.URL, buyer, "yes")
	second := visit("holder", proxied.URL, addr["user0"], "no")
	if len(first.Results) != 5 || len(second.Results) != 3 {
		t.Fatalf("results: %+v / %+v", first, second)
	}
	for _, o := range []outcome{first, second} {
		for i, r := range o.Results {
			if !r.OK || r.Status != 200 {
				t.Errorf("result %d: %+v", i, r)
			}
		}
	}

	// The second visitor's wallet then sends a transfer on the chain.
	hash, height, err := n.Send(ctx, "user0", addr["user1"], sdk.NewCoins(sdk.NewInt64Coin(devnet.BondDenom, 77)))
	if err != nil {
		t.Fatal(err)
	}
	client, err := cometbft.New(chain.RPC, cometbft.Retry{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.WaitForHeight(ctx, height+1); err != nil {
		t.Fatal(err)
	}
	m, _ := indexer.NewMetrics(nil)
	if err := indexer.NewCosmos(chain, db, indexer.NewClientSource(client), cosmos.NewAdapter(chain.Kind, chain.Bech32Prefix),
		slog.New(slog.DiscardHandler), m).Run(ctx, height+1); err != nil {
		t.Fatal(err)
	}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(&config.Config{Chains: []config.Chain{chain}})...)
	if err != nil {
		t.Fatal(err)
	}
	report := func() engagement.Report {
		t.Helper()
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		return readReport(t, db, apiSrv, id)
	}
	got := report()
	if got.Clicks != 2 || got.WebsiteConversions != 1 || got.OnchainConversions != 1 || got.ConversionValueUSD != "25" {
		t.Errorf("report %+v, want 2 clicks, a website conversion worth 25 and an on-chain one", got)
	}
	var conv []string
	if err := db.NewRaw(`SELECT source || ' ' || attribution || ' ' || coalesce(tx_hash, '') FROM conversions WHERE campaign_id = ? ORDER BY source`, id).
		Scan(ctx, &conv); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("[onchain click %s website click ]", hash); fmt.Sprint(conv) != want {
		t.Errorf("conversions %v, want %s", conv, want)
	}
	var warned int
	if err := db.NewRaw(`SELECT count(*) FROM tracked_events WHERE name = 'gift_card' AND attributes->>'amount_usd' = 'lots'`).Scan(ctx, &warned); err != nil || warned != 1 {
		t.Errorf("the event with a bad attribute is stored %d times (%v), want once", warned, err)
	}
	answered := false
	for _, h := range rec.from(shopOrigin) {
		if h.Method == "POST" && strings.Contains(string(h.Body), `"name":"gift_card"`) {
			answered = h.Status == 200 && strings.Contains(string(h.Answer), `"warnings"`) && strings.Contains(string(h.Answer), "amount_usd")
		}
	}
	if !answered {
		t.Error("the answer to the event with a bad attribute carries no warning about amount_usd")
	}
	if again := report(); again.Clicks != got.Clicks || again.WebsiteConversions != got.WebsiteConversions ||
		again.OnchainConversions != got.OnchainConversions || again.ConversionValueUSD != got.ConversionValueUSD {
		t.Errorf("a second run changed the report: %+v, then %+v", got, again)
	}
}

// readReport asks the admin API for a campaign's report.
func readReport(t *testing.T, db *bun.DB, apiSrv *httptest.Server, id int64) engagement.Report {
	t.Helper()
	admin, _, err := apikey.Create(context.Background(), db, apikey.Spec{Name: fmt.Sprintf("admin-%d", time.Now().UnixNano()), Kind: apikey.Secret,
		Scopes: []string{"admin"}, QuotaCredits: 1 << 30, QuotaPeriod: time.Hour, RatePerSec: 1000, RateBurst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/admin/campaigns/%d/report", apiSrv.URL, id), nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var rep engagement.Report
	if resp.StatusCode != 200 || json.Unmarshal(body, &rep) != nil {
		t.Fatalf("report: %d %s", resp.StatusCode, body)
	}
	return rep
}
