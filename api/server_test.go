package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainlens/chainlens/store"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
)

// testConfig is the API config after defaults, as config.Load would give it.
func testConfig(t testing.TB) config.API {
	t.Helper()
	cfg, err := config.Parse([]byte("database: {url: postgres://postgres@127.0.0.1:5432/x}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.API
}

type env struct {
	db    *bun.DB
	srv   *httptest.Server
	meter *apikey.Meter
	key   string // secret key, all scopes
}

// whalesHandler is a real handler for one operation, used to exercise the
// implemented path of the middleware (the dex group's own handlers are
// tested in their package).
func whalesHandler(ctx context.Context, req *api.Request) (*api.Response, error) {
	rows := make([]map[string]any, 0)
	for i := range req.Params.Int("limit") {
		rows = append(rows, map[string]any{"wallet": "osmo1" + strings.Repeat("q", 38) + string(rune('a'+i%26)), "trading_volume_last_7_days": 1.5,
			"lp_volume_last_7_days": 0, "staking_volume_last_7_days": 2, "total_volume_last_7_days": 3.5})
	}
	return &api.Response{Body: rows, Freshness: api.Freshness{Chains: []api.ChainHeight{{ChainID: "localosmosis", Height: 299, Time: time.Date(2026, 11, 21, 21, 32, 53, 0, time.UTC)}}}}, nil
}

func newEnv(t *testing.T, mutate func(*config.API, *api.Handlers)) *env {
	t.Helper()
	return newEnvWith(t, func(o *api.Options, _ *bun.DB) {
		if mutate != nil {
			mutate(&o.Config, &o.Handlers)
		}
	})
}

// newEnvWith is newEnv with access to every server option and the database.
func newEnvWith(t *testing.T, mutate func(*api.Options, *bun.DB)) *env {
	t.Helper()
	db, _ := testdb.New(t)
	log := slog.New(slog.DiscardHandler)
	meter := apikey.NewMeter(db, log)
	opt := api.Options{Config: testConfig(t), Ops: route.Table(), Handlers: api.Handlers{JSON: map[route.ID]api.Handler{}, Raw: map[route.ID]api.RawHandler{}},
		Auth: apikey.NewAuthenticator(db), Meter: meter, Log: log}
	mutate(&opt, db)
	s, err := api.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler(opt.Config.Listen))
	t.Cleanup(srv.Close)
	raw, _, err := apikey.Create(context.Background(), db, apikey.Spec{Name: "test", Kind: apikey.Secret, Scopes: []string{"all"},
		QuotaCredits: 1000, QuotaPeriod: 24 * time.Hour, RatePerSec: 1000, RateBurst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, srv: srv, meter: meter, key: raw}
}

func (e *env) do(t *testing.T, method, path, key string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableCompression: true}
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func TestErrorsAreProblems(t *testing.T) {
	e := newEnv(t, nil)
	cases := []struct {
		name, method, path, key string
		status                  int
		detail                  string
	}{
		{"no key", "GET", "/apr", "", 401, "an API key is required"},
		{"bad key", "GET", "/apr", "sk_nope", 401, "unknown or revoked"},
		{"not implemented", "GET", "/apr", e.key, 501, "GET /apr (dex group) is not implemented yet"},
		{"unknown path", "GET", "/nothing/here", e.key, 404, "no endpoint at /nothing/here"},
		{"wrong method", "POST", "/apr", e.key, 405, "POST is not allowed here"},
		{"wrong method on track", "GET", "/track", e.key, 405, "use POST"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := e.do(t, c.method, c.path, c.key, nil)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("content type %q", ct)
			}
			var p map[string]any
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(p["message"].(string), c.detail) || p["detail"] != p["message"] || int(p["status"].(float64)) != c.status {
				t.Fatalf("problem %s", body)
			}
			if resp.Header.Get("X-Request-Id") == "" || p["request_id"] != resp.Header.Get("X-Request-Id") {
				t.Fatalf("request id missing: %v / %s", resp.Header, body)
			}
		})
	}
}

func TestScopesAndPublishableKeys(t *testing.T) {
	e := newEnv(t, func(c *config.API, h *api.Handlers) { h.JSON[route.DexLensActiveWhales] = whalesHandler })
	ctx := context.Background()
	perpOnly, _, _ := apikey.Create(ctx, e.db, apikey.Spec{Name: "perp", Kind: apikey.Secret, Scopes: []string{"perp"}, QuotaCredits: 100, QuotaPeriod: time.Hour, RatePerSec: 10, RateBurst: 10})
	dexOnly, _, _ := apikey.Create(ctx, e.db, apikey.Spec{Name: "dex", Kind: apikey.Secret, Scopes: []string{"dex"}, QuotaCredits: 100, QuotaPeriod: time.Hour, RatePerSec: 10, RateBurst: 10})
	dexLens, _, _ := apikey.Create(ctx, e.db, apikey.Spec{Name: "dex lens", Kind: apikey.Secret, Scopes: []string{"dex_lens"}, QuotaCredits: 100, QuotaPeriod: time.Hour, RatePerSec: 10, RateBurst: 10})
	pub, _, _ := apikey.Create(ctx, e.db, apikey.Spec{Name: "site", Kind: apikey.Publishable, Scopes: []string{"engagement"}, Origins: []string{"https://a.example"}, QuotaCredits: 100, QuotaPeriod: time.Hour, RatePerSec: 10, RateBurst: 10})

	// acao is the Access-Control-Allow-Origin a page needs to read the
	// answer: every answer of a publishable operation to an allowed origin
	// carries it, errors included; nothing else does.
	cases := []struct {
		name, method, path, key, origin string
		status                          int
		acao                            string
	}{
		{"all-scopes key ok", "GET", "/activity/active_whales?limit=1", e.key, "", 200, ""},
		{"dex lens key ok", "GET", "/activity/active_whales?limit=1", dexLens, "", 200, ""},
		{"perp key on dex lens", "GET", "/activity/active_whales", perpOnly, "", 403, ""},
		{"dex key on dex lens (another group at the same address)", "GET", "/activity/active_whales", dexOnly, "", 403, ""},
		{"dex lens key on dex", "GET", "/apr", dexLens, "", 403, ""},
		{"dex key on dex (group not built here)", "GET", "/apr", dexOnly, "", 501, ""},
		{"publishable on analytics", "GET", "/activity/active_whales", pub, "https://a.example", 403, ""},
		{"publishable on track (secret only)", "POST", "/track", pub, "https://a.example", 403, ""},
		{"publishable from other origin", "POST", "/sdk/track", pub, "https://evil.example", 403, ""},
		{"publishable allowed (group not built)", "POST", "/sdk/track", pub, "https://a.example", 501, "https://a.example"},
		{"unknown key from an allowed origin", "POST", "/sdk/track", "pk_nope", "https://a.example", 401, "https://a.example"},
		{"campaign from an allowed origin", "GET", "/campaign/global?position_id=keplr_home", pub, "https://a.example", 501, "https://a.example"},
		// The origin is allowed by a publishable key, but the caller's key
		// is a secret one: the page may not read the answer.
		{"secret key from an allowed origin", "GET", "/campaign/global?position_id=keplr_home", e.key, "https://a.example", 501, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := e.do(t, c.method, c.path, c.key, map[string]string{"Origin": c.origin})
			if resp.StatusCode != c.status || resp.Header.Get("Access-Control-Allow-Origin") != c.acao {
				t.Fatalf("status %d, want %d: %s; Access-Control-Allow-Origin %q, want %q", resp.StatusCode, c.status, body,
					resp.Header.Get("Access-Control-Allow-Origin"), c.acao)
			}
			if c.acao != "" && !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
				t.Errorf("Retry-After not exposed: %v", resp.Header)
			}
		})
	}
	for _, p := range []struct{ path, methods string }{{"/sdk/track", "POST, OPTIONS"}, {"/campaign/osmo1x", "GET, OPTIONS"}, {"/campaign/multiple-cointype", "GET, OPTIONS"}} {
		resp, _ := e.do(t, "OPTIONS", p.path, "", map[string]string{"Origin": "https://a.example"})
		if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Methods") != p.methods || resp.Header.Get("Access-Control-Allow-Origin") != "https://a.example" {
			t.Fatalf("preflight %s: %d %v", p.path, resp.StatusCode, resp.Header)
		}
	}
	if resp, _ := e.do(t, "OPTIONS", "/sdk/track", "", map[string]string{"Origin": "https://evil.example"}); resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight from a foreign origin: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestImplementedAnswerHeaders(t *testing.T) {
	e := newEnv(t, func(c *config.API, h *api.Handlers) { h.JSON[route.DexLensActiveWhales] = whalesHandler })
	resp, body := e.do(t, "GET", "/activity/active_whales?limit=2", e.key, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	want := map[string]string{
		"Content-Type":          "application/json",
		"X-Data-Height":         "299",
		"X-Data-Time":           "2026-11-21T21:32:53Z",
		"Cache-Control":         "private, max-age=30",
		"X-Ratelimit-Limit":     "1000",
		"X-Ratelimit-Remaining": "995",
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	var rows []map[string]any
	if err := json.Unmarshal(body, &rows); err != nil || len(rows) != 2 {
		t.Fatalf("body %s", body)
	}
	etag := resp.Header.Get("ETag")
	resp, body = e.do(t, "GET", "/activity/active_whales?limit=2", e.key, map[string]string{"If-None-Match": etag})
	if resp.StatusCode != 304 || len(body) != 0 {
		t.Fatalf("If-None-Match: %d %q", resp.StatusCode, body)
	}
	resp, body = e.do(t, "GET", "/activity/active_whales?limit=50", e.key, map[string]string{"Accept-Encoding": "gzip"})
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip: %v", resp.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if err := json.Unmarshal(plain, &rows); err != nil || len(rows) != 50 {
		t.Fatalf("gunzipped body: %d rows, %v", len(rows), err)
	}
	resp, body = e.do(t, "GET", "/activity/active_whales?limit=0", e.key, nil)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"invalid_params":[{"name":"limit"`) {
		t.Fatalf("limit=0: %d %s", resp.StatusCode, body)
	}
}

func TestCreditsQuotaAndRevocation(t *testing.T) {
	e := newEnv(t, func(c *config.API, h *api.Handlers) { h.JSON[route.DexLensActiveWhales] = whalesHandler })
	ctx := context.Background()
	small, _, _ := apikey.Create(ctx, e.db, apikey.Spec{Name: "small", Kind: apikey.Secret, Scopes: []string{"dex_lens"}, QuotaCredits: 12, QuotaPeriod: time.Hour, RatePerSec: 100, RateBurst: 100})
	for i, want := range []int{200, 200, 429} { // 5 credits each: 5, 10, then 15 > 12
		resp, body := e.do(t, "GET", "/activity/active_whales?limit=1", small, nil)
		if resp.StatusCode != want {
			t.Fatalf("call %d: %d, want %d: %s", i, resp.StatusCode, want, body)
		}
		if want == 429 && resp.Header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	if err := e.meter.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	usage, err := apikey.UsageReport(ctx, e.db)
	if err != nil {
		t.Fatal(err)
	}
	var got int64 = -1
	for _, u := range usage {
		if u.Name == "small" {
			got = u.Credits
		}
	}
	if got != 10 {
		t.Fatalf("stored credits = %d, want 10", got)
	}
	// A second process (a new meter) sees the stored consumption.
	other := apikey.NewMeter(e.db, slog.New(slog.DiscardHandler))
	if err := other.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	keys, _ := apikey.List(ctx, e.db)
	for _, k := range keys {
		if k.Name == "small" {
			if d := other.Allow(&k, 5); d.Allowed || d.Remaining != 2 {
				t.Fatalf("second process allowed %+v", d)
			}
		}
	}

	// Revocation takes effect within a second.
	if n, err := apikey.Revoke(ctx, e.db, "test"); err != nil || n != 1 {
		t.Fatalf("revoke: %d %v", n, err)
	}
	deadline := time.Now().Add(1500 * time.Millisecond)
	for {
		resp, _ := e.do(t, "GET", "/activity/active_whales?limit=1", e.key, nil)
		if resp.StatusCode == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("revoked key still accepted after 1.5 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, func(c *config.API, h *api.Handlers) { h.JSON[route.DexLensActiveWhales] = whalesHandler })
	k, _, _ := apikey.Create(context.Background(), e.db, apikey.Spec{Name: "slow", Kind: apikey.Secret, Scopes: []string{"dex_lens"}, QuotaCredits: 1000, QuotaPeriod: time.Hour, RatePerSec: 0.01, RateBurst: 2})
	var codes []int
	for range 3 {
		resp, _ := e.do(t, "GET", "/activity/active_whales?limit=1", k, nil)
		codes = append(codes, resp.StatusCode)
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 {
		t.Fatalf("codes %v, want [200 200 429]", codes)
	}
}

func TestOpenAPIDocument(t *testing.T) {
	e := newEnv(t, func(c *config.API, h *api.Handlers) { h.JSON[route.DexLensActiveWhales] = whalesHandler })
	resp, body := e.do(t, "GET", "/openapi.json", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d", resp.StatusCode)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("document invalid: %v", err)
	}
	ops, implemented := 0, 0
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			ops++
			if op.Extensions["x-implemented"] == true {
				implemented++
			}
		}
	}
	if ops != 102 || implemented != 1 {
		t.Fatalf("operations %d (implemented %d), want 102 (1)", ops, implemented)
	}

	// The implemented operation's real answer validates against the document.
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/activity/active_whales?limit=3", nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rb, _ := io.ReadAll(res.Body)
	req.URL.Host, req.URL.Scheme = "", ""
	req.URL, _ = req.URL.Parse("/activity/active_whales?limit=3")
	r, pathParams, err := router.FindRoute(req)
	if err != nil {
		t.Fatal(err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams, Route: r, Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: res.StatusCode, Header: res.Header, Body: io.NopCloser(bytes.NewReader(rb)),
	}); err != nil {
		t.Fatalf("response does not match the document: %v", err)
	}

	resp, body = e.do(t, "GET", "/docs?plain=1", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "/pools/depth/{pool_id}/current") {
		t.Fatalf("plain docs page: %d", resp.StatusCode)
	}
	// The interactive reference and its embedded assets, from the server only.
	resp, body = e.do(t, "GET", "/docs", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `data-openapi="/openapi.json"`) || strings.Contains(string(body), "//") && strings.Contains(string(body), "https://") {
		t.Fatalf("docs page: %d %s", resp.StatusCode, body)
	}
	for _, a := range []string{"/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css", "/docs/assets/chainlens-docs.js"} {
		if resp, body := e.do(t, "GET", a, "", nil); resp.StatusCode != 200 || len(body) < 500 {
			t.Fatalf("%s: %d, %d bytes", a, resp.StatusCode, len(body))
		}
	}
}

func TestGroupsOnPrefixesAndListeners(t *testing.T) {
	cfg := testConfig(t)
	cfg.Groups = map[string]config.GroupServe{"dex": {Prefix: "/dex"}, "dex_lens": {Public: true}, "perp": {Listen: "127.0.0.1:0", Public: true}}
	s, err := api.New(api.Options{Config: cfg, Ops: route.Table(), Handlers: api.Handlers{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Addrs(); len(got) != 2 || got[0] != cfg.Listen || got[1] != "127.0.0.1:0" {
		t.Fatalf("addrs %v", got)
	}
	main := httptest.NewServer(s.Handler(cfg.Listen))
	defer main.Close()
	perp := httptest.NewServer(s.Handler("127.0.0.1:0"))
	defer perp.Close()
	cases := []struct {
		srv    *httptest.Server
		path   string
		status int
	}{
		{main, "/dex/apr", 401},                    // dex under its prefix, key required
		{main, "/dex/activity/active_whales", 501}, // dex lens: with dex, public, not built yet
		{perp, "/activity/retention_rate", 401},    // perp lens: with perp, not public
		{main, "/apr", 404},                        // not at the root any more
		{main, "/perp/crm", 404},                   // perp is on its own listener
		{perp, "/perp/crm", 501},                   // public group: no key needed, not built yet
		{main, "/campaign/global", 401},            // engagement stays on the default listener
		{main, "/dex/openapi.json", 200},           // per-group document
	}
	for _, c := range cases {
		resp, err := http.Get(c.srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", c.path, resp.StatusCode, c.status)
		}
	}
	// The document of the dex address: the public lens group needs no key,
	// the dex group does.
	resp, err := http.Get(main.URL + "/dex/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Security []any `json:"security"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if got := len(doc.Paths["/activity/active_whales"]["get"].Security); got != 0 {
		t.Errorf("public dex lens operation documents %d security requirements, want none", got)
	}
	if got := len(doc.Paths["/apr"]["get"].Security); got != 1 {
		t.Errorf("dex operation documents %d security requirements, want 1", got)
	}
}

// TestResponseCache answers identical analytics requests from memory within
// the cache TTL, and asks the handler again once it has passed.
func TestResponseCache(t *testing.T) {
	var calls atomic.Int64
	e := newEnv(t, func(c *config.API, h *api.Handlers) {
		c.CacheTTL = config.Duration(300 * time.Millisecond)
		c.CacheStale = 0
		h.JSON[route.DexLensActiveWhales] = func(ctx context.Context, req *api.Request) (*api.Response, error) {
			calls.Add(1)
			return whalesHandler(ctx, req)
		}
	})
	for _, q := range []string{"limit=2", "limit=2", "limit=3", "limit=2"} {
		if resp, body := e.do(t, "GET", "/activity/active_whales?"+q, e.key, nil); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	if got := calls.Load(); got != 2 {
		t.Fatalf("handler called %d times, want 2 (limit=2 once, limit=3 once)", got)
	}
	time.Sleep(350 * time.Millisecond)
	e.do(t, "GET", "/activity/active_whales?limit=2", e.key, nil)
	if got := calls.Load(); got != 3 {
		t.Fatalf("after the TTL the handler was called %d times in all, want 3", got)
	}
	if resp, _ := e.do(t, "GET", "/activity/active_whales?limit=2", "", nil); resp.StatusCode != 401 {
		t.Fatalf("a cached answer must still require a key: %d", resp.StatusCode)
	}
}

// TestResponseCacheStaleWhileRevalidate: past the TTL, within cache_stale,
// the kept answer is sent at once while one background call recomputes it;
// the next request gets the new answer; a failed refresh keeps the old one
// until it ages out; past TTL+stale the answer is computed before sending.
func TestResponseCacheStaleWhileRevalidate(t *testing.T) {
	const ttl, stale = 200 * time.Millisecond, 600 * time.Millisecond
	var calls atomic.Int64
	gate := make(chan struct{}, 10)
	var fail atomic.Bool
	e := newEnv(t, func(c *config.API, h *api.Handlers) {
		c.CacheTTL = config.Duration(ttl)
		c.CacheStale = config.Duration(stale)
		h.JSON[route.DexLensActiveWhales] = func(ctx context.Context, req *api.Request) (*api.Response, error) {
			n := calls.Add(1)
			if n > 1 {
				<-gate // recomputations wait until the test lets them go
			}
			if fail.Load() {
				return nil, errors.New("report table unavailable")
			}
			return &api.Response{Body: map[string]int64{"call": n}, Freshness: api.Freshness{Chains: []api.ChainHeight{{ChainID: "localosmosis", Height: 299 + n, Time: time.Date(2026, 11, 21, 21, 32, 53, 0, time.UTC)}}}}, nil
		}
	})
	get := func() (string, string) {
		t.Helper()
		resp, body := e.do(t, "GET", "/activity/active_whales", e.key, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		return strings.TrimSpace(string(body)), resp.Header.Get("X-Data-Height")
	}
	waitCalls := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); calls.Load() < n; {
			if time.Now().After(deadline) {
				t.Fatalf("handler called %d times, want %d", calls.Load(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	if body, h := get(); body != `{"call":1}` || h != "300" {
		t.Fatalf("first answer %s at %s", body, h)
	}
	time.Sleep(ttl + 50*time.Millisecond)
	// Stale: sent at once (the recomputation is blocked on the gate), and
	// a second stale request does not start another recomputation.
	for range 2 {
		if body, h := get(); body != `{"call":1}` || h != "300" {
			t.Fatalf("stale answer %s at %s", body, h)
		}
	}
	waitCalls(2)
	gate <- struct{}{}
	// The refreshed answer replaces the stale one.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if body, _ := get(); body == `{"call":2}` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the refreshed answer never replaced the stale one")
		}
	}
	if got := calls.Load(); got != 2 {
		t.Fatalf("handler called %d times, want 2 (one refresh for several stale requests)", got)
	}

	// A failed refresh keeps the stale answer (and a later stale request
	// tries again).
	fail.Store(true)
	time.Sleep(ttl + 50*time.Millisecond)
	gate <- struct{}{}
	if body, _ := get(); body != `{"call":2}` {
		t.Fatalf("stale answer before a failing refresh: %s", body)
	}
	waitCalls(3)
	gate <- struct{}{}
	for deadline := time.Now().Add(5 * time.Second); calls.Load() < 4; time.Sleep(5 * time.Millisecond) {
		if body, _ := get(); body != `{"call":2}` {
			t.Fatalf("after a failed refresh the stale answer must still be sent: %s", body)
		}
		if time.Now().After(deadline) {
			t.Fatal("a stale request after a failed refresh never tried again")
		}
	}

	// Past TTL+stale nothing is sent from memory: the failure is the answer.
	time.Sleep(ttl + stale)
	gate <- struct{}{}
	if resp, body := e.do(t, "GET", "/activity/active_whales", e.key, nil); resp.StatusCode != 500 {
		t.Fatalf("past the stale window: %d %s, want the handler's 500", resp.StatusCode, body)
	}
}

// TestResponseCacheFollowsAnnouncedChanges: with the database's change
// announcements followed, an answer stays in memory past the 1 s fallback
// until its chain's data (or a report table) is announced changed; a change
// of another chain leaves it alone.
func TestResponseCacheFollowsAnnouncedChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int64
	changes := store.NewChanges()
	e := newEnvWith(t, func(o *api.Options, db *bun.DB) {
		o.Config.CacheTTL = config.Duration(time.Minute)
		o.Config.CacheStale = 0
		o.Changes = changes
		o.Handlers.JSON[route.DexLensActiveWhales] = func(ctx context.Context, req *api.Request) (*api.Response, error) {
			n := calls.Add(1)
			return &api.Response{Body: map[string]int64{"call": n}, Freshness: api.Freshness{Chains: []api.ChainHeight{{ChainID: "a", Height: n, Time: time.Date(2026, 11, 21, 21, 32, 53, 0, time.UTC)}}}}, nil
		}
		for _, chain := range []string{"a", "b"} {
			if err := store.EnsurePartitions(ctx, db, chain, []string{"blocks"}, 1, 10); err != nil {
				t.Fatal(err)
			}
		}
		go func() { _ = changes.Run(ctx, db, slog.New(slog.DiscardHandler)) }()
	})
	for deadline := time.Now().Add(10 * time.Second); !changes.Listening(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not listening")
		}
	}
	get := func() string {
		t.Helper()
		resp, body := e.do(t, "GET", "/activity/active_whales", e.key, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		return strings.TrimSpace(string(body))
	}
	commit := func(chain string, height int) {
		t.Helper()
		before := changes.Seq()
		if _, err := e.db.ExecContext(ctx, "INSERT INTO blocks VALUES (?, ?, 'h', now(), 'p', 'x', 0)", chain, height); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); !changes.ChangedSince(before, []string{chain}); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the commit of chain %s was never announced", chain)
			}
		}
	}
	steps := []struct {
		name   string
		before func()
		want   string
	}{
		{"first request", func() {}, `{"call":1}`},
		{"past the 1 s fallback, nothing changed", func() { time.Sleep(1100 * time.Millisecond) }, `{"call":1}`},
		{"another chain committed", func() { commit("b", 1) }, `{"call":1}`},
		{"its chain committed", func() { commit("a", 1) }, `{"call":2}`},
		{"again, nothing changed", func() {}, `{"call":2}`},
	}
	for _, s := range steps {
		s.before()
		if got := get(); got != s.want {
			t.Fatalf("%s: %s, want %s", s.name, got, s.want)
		}
	}
}

// TestResponseCacheRefreshPanics: a handler that panics while refreshing a
// stale answer in the background does not take the server down; the stale
// answer is still sent and a later request tries again.
func TestResponseCacheRefreshPanics(t *testing.T) {
	var calls atomic.Int64
	e := newEnv(t, func(c *config.API, h *api.Handlers) {
		c.CacheTTL = config.Duration(100 * time.Millisecond)
		c.CacheStale = config.Duration(10 * time.Second)
		h.JSON[route.DexLensActiveWhales] = func(ctx context.Context, req *api.Request) (*api.Response, error) {
			if calls.Add(1) > 1 {
				panic("report row missing")
			}
			return whalesHandler(ctx, req)
		}
	})
	if resp, body := e.do(t, "GET", "/activity/active_whales?limit=1", e.key, nil); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	time.Sleep(150 * time.Millisecond)
	for deadline := time.Now().Add(5 * time.Second); calls.Load() < 3; time.Sleep(10 * time.Millisecond) {
		if resp, body := e.do(t, "GET", "/activity/active_whales?limit=1", e.key, nil); resp.StatusCode != 200 {
			t.Fatalf("stale answer while refreshes panic: %d %s", resp.StatusCode, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("handler called %d times: a panicked refresh was never tried again", calls.Load())
		}
	}
}

// TestResponseCacheSharesMisses: identical requests that miss the cache at
// the same moment are answered by one handler call.
func TestResponseCacheSharesMisses(t *testing.T) {
	var calls atomic.Int64
	release := make(chan struct{})
	e := newEnv(t, func(c *config.API, h *api.Handlers) {
		h.JSON[route.DexLensActiveWhales] = func(ctx context.Context, req *api.Request) (*api.Response, error) {
			calls.Add(1)
			<-release
			return whalesHandler(ctx, req)
		}
	})
	var wg sync.WaitGroup
	codes := make(chan int, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := e.do(t, "GET", "/activity/active_whales?limit=4", e.key, nil)
			codes <- resp.StatusCode
		}()
	}
	time.Sleep(300 * time.Millisecond) // all eight wait on the first computation
	close(release)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("status %d", c)
		}
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("handler called %d times for 8 identical concurrent requests, want 1", got)
	}
}

// TestBearerSchemeAndReadiness: the Bearer scheme is case-insensitive; a
// failed readiness check answers 503 problem+json without the cause.
func TestBearerSchemeAndReadiness(t *testing.T) {
	ready := errors.New("dial tcp 10.0.0.7:5432: connect: connection refused")
	e := newEnvWith(t, func(o *api.Options, _ *bun.DB) {
		o.Handlers.JSON[route.DexLensActiveWhales] = whalesHandler
		o.Ready = func(context.Context) error { return ready }
	})
	for _, c := range []struct {
		authz  string
		status int
	}{
		{"Bearer " + e.key, 200},
		{"bearer " + e.key, 200},
		{"BEARER  " + e.key + " ", 200},
		{"Basic " + e.key, 401},
		{"Bearer", 401},
		{e.key, 401},
	} {
		if resp, body := e.do(t, "GET", "/activity/active_whales", "", map[string]string{"Authorization": c.authz}); resp.StatusCode != c.status {
			t.Errorf("Authorization %q: %d %s, want %d", c.authz, resp.StatusCode, body, c.status)
		}
	}
	resp, body := e.do(t, "GET", "/readyz", "", nil)
	if resp.StatusCode != 503 || resp.Header.Get("Content-Type") != "application/problem+json" || strings.Contains(string(body), "10.0.0.7") {
		t.Errorf("readyz: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	ready = nil
	if resp, body := e.do(t, "GET", "/readyz", "", nil); resp.StatusCode != 200 || string(body) != "{\"status\":\"ready\"}\n" {
		t.Errorf("readyz when ready: %d %s", resp.StatusCode, body)
	}
}

// TestDatabaseOutageAnswers503: a keyed request whose key cannot be looked
// up because the database is gone (refused: a restart, a failover) is a
// 503 with Retry-After, not a 500, and /readyz says the database is
// unreachable.
func TestDatabaseOutageAnswers503(t *testing.T) {
	t.Parallel()
	gone := bun.NewDB(sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN("postgres://postgres@127.0.0.1:1/none?sslmode=disable"))), pgdialect.New())
	t.Cleanup(func() { _ = gone.Close() })
	e := newEnvWith(t, func(o *api.Options, _ *bun.DB) {
		o.Handlers.JSON[route.DexLensActiveWhales] = whalesHandler
		o.Auth = apikey.NewAuthenticator(gone)
		o.Ready = func(ctx context.Context) error { return gone.PingContext(ctx) }
	})
	for _, path := range []string{"/activity/active_whales", "/readyz"} {
		resp, body := e.do(t, "GET", path, e.key, nil)
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "5" || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d Retry-After %q %s", path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if want := "the database is unreachable"; !strings.Contains(string(body), want) && path == "/readyz" {
			t.Errorf("%s: %s, want it to say %q", path, body, want)
		}
	}
}
