// Package js_test runs the built JavaScript SDK (dist/engage.js) in headless
// Chromium against the real chainlens API on a fresh Postgres database and
// checks what lands in tracked_events. It needs `scripts/sdk.sh` (npm ci,
// build) to have run and Chromium installed; it fails, never skips, without them.
package js_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/testdb"
)

const (
	bundlePath = "dist/engage.js"
	sourcePath = "src/engage.ts"
	// Addresses the test page identifies with.
	cosmosUser = "osmo1qyqszqgpqyqszqgpqyqszqgpqyqszqgpjnp7du"
	evmUser    = "0x52908400098527886E0F7030069857D2E4169EE7"
)

// chromium returns the browser to run: $CHROMIUM, else /usr/bin/chromium.
func chromium(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CHROMIUM")
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("headless Chromium is required (%v): run scripts/sdk.sh, which installs it (apt-get install -y chromium), or set CHROMIUM", err)
	}
	return bin
}

// bundle reads the built SDK.
func bundle(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(bundlePath)
	if err != nil {
		t.Fatalf("the built SDK %s is missing (%v): run scripts/sdk.sh (npm ci && npm run build in sdk/js) first", bundlePath, err)
	}
	built, errB := os.Stat(bundlePath)
	src, errS := os.Stat(sourcePath)
	if errB != nil || errS != nil || src.ModTime().After(built.ModTime()) {
		t.Fatalf("the built SDK %s is older than %s (or unreadable): run scripts/sdk.sh to rebuild it", bundlePath, sourcePath)
	}
	return b
}

// hit is one request the API received from a browser, with its answer.
type hit struct {
	Method, Path, Origin string
	Status               int
	Body, Answer         []byte
	Header               http.Header
}

// recorder keeps every request the API answers. fault, when set, runs around
// each request: it may break the server before and repair it in the func it returns.
type recorder struct {
	mu    sync.Mutex
	hits  []hit
	fault func(body []byte) (repair func())
}

// teeWriter keeps a copy of the answer.
type teeWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (rec *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		tw := &teeWriter{ResponseWriter: w}
		rec.mu.Lock()
		fault := rec.fault
		rec.mu.Unlock()
		if fault != nil {
			defer fault(body)()
		}
		next.ServeHTTP(tw, r)
		if tw.status == 0 {
			tw.status = http.StatusOK
		}
		rec.mu.Lock()
		rec.hits = append(rec.hits, hit{Method: r.Method, Path: r.URL.Path, Origin: r.Header.Get("Origin"), Status: tw.status,
			Body: body, Answer: tw.body.Bytes(), Header: tw.Header().Clone()})
		rec.mu.Unlock()
	})
}

func (rec *recorder) setFault(f func(body []byte) (repair func())) {
	rec.mu.Lock()
	rec.fault = f
	rec.mu.Unlock()
}

// from returns the requests sent from origin, in order.
func (rec *recorder) from(origin string) []hit {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []hit
	for _, h := range rec.hits {
		if h.Origin == origin {
			out = append(out, h)
		}
	}
	return out
}

// startAPI starts the real API server (route table, app handlers, real keys
// and meter) on db.
func startAPI(t *testing.T, db *bun.DB, rec *recorder) *httptest.Server {
	t.Helper()
	return startAPIWith(t, db, rec, "")
}

// startAPIWith is startAPI with more configuration (YAML lines).
func startAPIWith(t *testing.T, db *bun.DB, rec *recorder, more string) *httptest.Server {
	t.Helper()
	cfg, err := config.Parse([]byte("database: {url: postgres://postgres@127.0.0.1:5432/x}\n"+more), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	s, err := api.New(api.Options{DB: db, Config: cfg.API, Ops: route.Table(), Handlers: app.Handlers(cfg, db),
		Auth: apikey.NewAuthenticator(db), Meter: apikey.NewMeter(db, log), Log: log, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rec.wrap(s.Handler(cfg.API.Listen)))
	t.Cleanup(srv.Close)
	return srv
}

// page is the test dapp: a start page that links to the app page (so the app
// page has a referrer), the app page running one scenario, and the bundle.
var page = template.Must(template.New("app").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>E2E dapp</title></head>
<body><pre id="out">pending</pre>
<script type="module">
import { createEngage } from "/engage.js";
const out = document.getElementById("out");
try {
  const sdk = createEngage({ apiKey: {{.Key}}, baseUrl: {{.API}}, retry: { maxRetries: 2, baseDelayMs: 100 } });
  const results = [];
  if ({{.Scenario}} === "first") {
    results.push(await sdk.page());
    results.push(await sdk.track("trade_made", { tokens: [{ amount: 1.5, denom: "uosmo" }], amount_usd: 0.75 }));
    results.push(await sdk.identify({{.Cosmos}}, { plan: "pro" }));
    results.push(await sdk.walletConnected({{.EVM}}));
  } else {
    results.push(await sdk.track("reloaded", { n: 2 }));
    // The server fails this one once with 503 and Retry-After: 1. The backoff
    // (at least 60 s) outlasts the browser's time budget, so the event lands
    // only if the SDK reads Retry-After from the cross-origin answer.
    const patient = createEngage({ apiKey: {{.Key}}, baseUrl: {{.API}}, retry: { baseDelayMs: 120000, maxDelayMs: 120000 } });
    results.push(await patient.track("flaky"));
  }
  out.textContent = JSON.stringify({ results, anonymousId: sdk.anonymousId, userAgent: navigator.userAgent,
    language: navigator.language, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    screen: [screen.width, screen.height] });
} catch (e) {
  out.textContent = JSON.stringify({ error: String(e) });
}
</script></body></html>`))

// site returns a loopback listener for the test dapp and its origin; serve
// starts it.
func site(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	return srv, "http://" + srv.Listener.Addr().String()
}

// serve starts srv serving the test dapp that calls apiURL with key.
func serve(t *testing.T, srv *httptest.Server, js []byte, apiURL, key string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /engage.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(js)
	})
	mux.HandleFunc("GET /start", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		next, _ := json.Marshal(r.URL.Query().Get("next"))
		fmt.Fprintf(w, `<!doctype html><title>start</title><script>location.href = %s;</script>`, next)
	})
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		err := page.Execute(w, map[string]string{"Key": key, "API": apiURL, "Scenario": r.URL.Query().Get("scenario"),
			"Cosmos": cosmosUser, "EVM": evmUser})
		if err != nil {
			t.Error(err)
		}
	})
	srv.Config.Handler = mux
	srv.Start()
}

// outcome is what the app page printed.
type outcome struct {
	Error   string `json:"error"`
	Results []struct {
		OK       bool   `json:"ok"`
		ID       string `json:"id"`
		Status   int    `json:"status"`
		Attempts int    `json:"attempts"`
		Error    string `json:"error"`
	} `json:"results"`
	AnonymousID string `json:"anonymousId"`
	UserAgent   string `json:"userAgent"`
	Language    string `json:"language"`
	Timezone    string `json:"timezone"`
	Screen      []int  `json:"screen"`
}

var outRE = regexp.MustCompile(`(?s)<pre id="out">(.*?)</pre>`)

// browse loads url in headless Chromium with the profile dir and returns what
// the page printed once its work (fetches and timers) is done.
func browse(t *testing.T, bin, profile, pageURL string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir="+profile, "--lang=de-CH", "--accept-lang=de-CH", "--screen-info={1280x720}",
		"--virtual-time-budget=30000", "--dump-dom", pageURL)
	cmd.Env = append(os.Environ(), "TZ=Europe/Zurich", "LANGUAGE=de_CH")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	m := outRE.FindSubmatch(stdout.Bytes())
	if err != nil || m == nil {
		t.Fatalf("chromium %s: %v\nstdout:\n%s\nstderr (tail):\n%s", pageURL, err, stdout.String(), tail(stderr.String(), 3000))
	}
	raw := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`, "&#39;", "'").Replace(string(m[1]))
	if raw == "pending" {
		t.Fatalf("%s: the page had not finished when the browser's virtual time budget (30 s) ran out (a retry waiting its full backoff?)", pageURL)
	}
	var o outcome
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		t.Fatalf("page output %q: %v\nstderr (tail):\n%s", raw, err, tail(stderr.String(), 3000))
	}
	if o.Error != "" {
		t.Fatalf("page failed: %s", o.Error)
	}
	return o
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// row is a stored event as the test reads it back.
type row struct {
	Name, IdentityType, IdentityID string
	AnonymousID, ClickID           *string
	Attributes, Page, Campaign     string
	Browser                        map[string]any
	App, MessageID                 string
	Source                         string
	KeyID                          int64
	ID                             string
}

func events(t *testing.T, db *bun.DB) []row {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT id, source, key_id, name, identity_type, identity_id, anonymous_id, click_id,
		attributes::text, (meta->'page')::text, coalesce((meta->'campaign')::text, ''), (meta->'browser')::text,
		coalesce(meta->>'app', ''), coalesce(meta->>'messageId', '')
		FROM tracked_events ORDER BY received_at, id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		var browser string
		if err := rows.Scan(&r.ID, &r.Source, &r.KeyID, &r.Name, &r.IdentityType, &r.IdentityID, &r.AnonymousID, &r.ClickID,
			&r.Attributes, &r.Page, &r.Campaign, &browser, &r.App, &r.MessageID); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(browser), &r.Browser); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// canon re-encodes a JSON text with sorted keys and no spaces.
func canon(t *testing.T, s string) string {
	t.Helper()
	if s == "" {
		return ""
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBrowserSDKEndToEnd(t *testing.T) {
	bin := chromium(t)
	js := bundle(t)
	db, _ := testdb.New(t)
	rec := &recorder{}
	apiSrv := startAPI(t, db, rec)

	// The API, the allowed site and the denied site are three loopback
	// origins (different ports): every SDK request is cross-origin.
	allowed, allowedOrigin := site(t)
	denied, _ := site(t)
	key, k, err := apikey.Create(context.Background(), db, apikey.Spec{Name: "dapp", Kind: apikey.Publishable,
		Scopes: []string{"engagement"}, Origins: []string{allowedOrigin}, QuotaCredits: 1 << 30, QuotaPeriod: time.Hour,
		RatePerSec: 1000, RateBurst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, allowed, js, apiSrv.URL, key)
	serve(t, denied, js, apiSrv.URL, key)

	profile, err := os.MkdirTemp("", "chainlens-sdk-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })

	// Run 1: start page -> app page with utm and click_id; four events.
	appURL := allowed.URL + "/app?scenario=first&utm_source=wallet&utm_medium=banner&utm_campaign=cl_q4&click_id=clk_e2e"
	startURL := allowed.URL + "/start?next=" + url.QueryEscape(appURL)
	first := browse(t, bin, filepath.Join(profile, "allowed"), startURL)
	if len(first.Results) != 4 {
		t.Fatalf("first run: %d results, want 4: %+v", len(first.Results), first)
	}
	for i, r := range first.Results {
		if !r.OK || r.Status != 200 || r.Attempts != 1 || !strings.HasPrefix(r.ID, "evt_") {
			t.Errorf("first run result %d: %+v", i, r)
		}
	}
	// Run 2: a new browser process on the same profile (a later visit): the
	// anonymous id and the user id come back from localStorage.
	// The first "flaky" POST finds tracked_events gone: the real handler
	// answers 503 with Retry-After.
	var failed atomic.Bool
	rec.setFault(func(body []byte) func() {
		if !bytes.Contains(body, []byte(`"name":"flaky"`)) || failed.Swap(true) {
			return func() {}
		}
		exec := func(q string) {
			if _, err := db.ExecContext(context.Background(), q); err != nil {
				t.Error(err)
			}
		}
		exec(`ALTER TABLE tracked_events RENAME TO tracked_events_away`)
		return func() { exec(`ALTER TABLE tracked_events_away RENAME TO tracked_events`) }
	})
	second := browse(t, bin, filepath.Join(profile, "allowed"), allowed.URL+"/app?scenario=second")
	rec.setFault(nil)
	if len(second.Results) != 2 || second.AnonymousID != first.AnonymousID || !second.Results[0].OK || second.Results[0].Attempts != 1 ||
		!second.Results[1].OK || second.Results[1].Attempts != 2 {
		t.Errorf("second run: %+v (first anonymousId %s)", second, first.AnonymousID)
	}
	// Run 3: the same page from an origin the key does not allow.
	third := browse(t, bin, filepath.Join(profile, "denied"), denied.URL+"/app?scenario=first")
	if len(third.Results) != 4 {
		t.Fatalf("denied run: %d results, want 4: %+v", len(third.Results), third)
	}
	for i, r := range third.Results {
		// The browser blocks the request after the failed preflight: the
		// page sees a network error (status 0), retried then given up.
		if r.OK || r.Status != 0 || r.Attempts != 3 || r.ID != "" {
			t.Errorf("denied run result %d: %+v", i, r)
		}
	}

	anon := first.AnonymousID
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(anon) {
		t.Errorf("anonymousId %q is not a UUID v4", anon)
	}
	got := events(t, db)
	host := strings.TrimPrefix(allowed.URL, "http://")
	host = host[:strings.LastIndex(host, ":")]
	appPage := canon(t, fmt.Sprintf(`{"path":"/app","referrer":%q,"search":%q,"title":"E2E dapp","url":%q}`,
		startURL, strings.TrimPrefix(appURL, allowed.URL+"/app"), appURL))
	secondURL := allowed.URL + "/app?scenario=second"
	secondPage := canon(t, fmt.Sprintf(`{"path":"/app","referrer":"","search":"?scenario=second","title":"E2E dapp","url":%q}`, secondURL))
	campaign := `{"campaign":"cl_q4","medium":"banner","source":"wallet"}`
	click := "clk_e2e"
	type want struct {
		name, idType, idID string
		clickID            *string
		attributes         string
		page, campaign     string
	}
	wants := []want{
		{"page", "anonymous", anon, &click, `{}`, appPage, campaign},
		{"trade_made", "anonymous", anon, &click, `{"amount_usd":0.75,"tokens":[{"amount":1.5,"denom":"uosmo"}]}`, appPage, campaign},
		{"identify", "address", cosmosUser, &click, `{"id":"` + cosmosUser + `","traits":{"plan":"pro"}}`, appPage, campaign},
		{"wallet_connected", "address", evmUser, &click, `{}`, appPage, campaign},
		// A new browser process: sessionStorage (the click) is gone, localStorage (the ids) is not.
		{"reloaded", "address", evmUser, nil, `{"n":2}`, secondPage, ""},
		{"flaky", "address", evmUser, nil, `{}`, secondPage, ""},
	}
	if len(got) != len(wants) {
		t.Fatalf("%d tracked events, want %d (nothing from the denied origin): %+v", len(got), len(wants), got)
	}
	ids := map[string]bool{}
	for _, r := range append(first.Results, second.Results...) {
		ids[r.ID] = true
	}
	messageIDs := map[string]bool{}
	for i, w := range wants {
		g := got[i]
		if g.Name != w.name || g.Source != "sdk" || g.KeyID != k.ID || g.IdentityType != w.idType || g.IdentityID != w.idID ||
			g.AnonymousID == nil || *g.AnonymousID != anon || (g.ClickID == nil) != (w.clickID == nil) ||
			(g.ClickID != nil && *g.ClickID != *w.clickID) || !ids[g.ID] {
			t.Errorf("event %d: got %s source=%s key=%d identity=%s/%s anon=%v click=%v id=%s; want %s %s/%s click=%v",
				i, g.Name, g.Source, g.KeyID, g.IdentityType, g.IdentityID, deref(g.AnonymousID), deref(g.ClickID), g.ID,
				w.name, w.idType, w.idID, deref(w.clickID))
		}
		if a := canon(t, g.Attributes); a != w.attributes {
			t.Errorf("event %d %s attributes %s, want %s", i, w.name, a, w.attributes)
		}
		if p := canon(t, g.Page); p != w.page {
			t.Errorf("event %d %s meta.page %s, want %s", i, w.name, p, w.page)
		}
		if c := canon(t, g.Campaign); c != w.campaign {
			t.Errorf("event %d %s meta.campaign %s, want %s", i, w.name, c, w.campaign)
		}
		if g.App != host {
			t.Errorf("event %d meta.app %q, want %q", i, g.App, host)
		}
		b := g.Browser
		if b["userAgent"] != first.UserAgent || !strings.Contains(first.UserAgent, "Chrome/") || b["language"] != "de-CH" ||
			b["timezone"] != "Europe/Zurich" || b["screenWidth"] != 1280.0 || b["screenHeight"] != 720.0 ||
			b["locale"] == "" || b["platform"] == "" {
			t.Errorf("event %d meta.browser %v (page saw ua %q language %q timezone %q screen %v)", i, b,
				first.UserAgent, first.Language, first.Timezone, first.Screen)
		}
		if messageIDs[g.MessageID] || g.MessageID == "" {
			t.Errorf("event %d meta.messageId %q empty or repeated", i, g.MessageID)
		}
		messageIDs[g.MessageID] = true
	}

	// What crossed the wire: the allowed origin's POSTs were preflighted
	// (Authorization is not a CORS-safelisted header, so text/plain alone
	// does not avoid the preflight) and answered 200.
	checkWire(t, rec.from(allowed.URL), 204, 200, 200, 200, 200, 200, 503, 200)
	// The denied origin got 403 preflights and the browser sent no POST.
	checkWire(t, rec.from(denied.URL), 403)

	// The bodies the browser sent and the answers it got match the served
	// OpenAPI document.
	resp, err := http.Get(apiSrv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range rec.from(allowed.URL) {
		if h.Method != http.MethodPost {
			continue
		}
		if h.Header.Get("Access-Control-Allow-Origin") != allowed.URL || !strings.Contains(h.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
			t.Errorf("POST answer without the CORS grant: %v", h.Header)
		}
		if h.Status == http.StatusServiceUnavailable && h.Header.Get("Retry-After") != "1" {
			t.Errorf("503 answer with Retry-After %q, want 1", h.Header.Get("Retry-After"))
		}
		validateBody(t, doc, "/sdk/track", h.Body)
		apitest.Validate(t, doc, h.Method, h.Path, &http.Response{StatusCode: h.Status, Header: h.Header}, h.Answer)
	}
}

// validateBody checks a JSON request body (sent as text/plain) against the
// application/json request schema of POST path in document.
func validateBody(t *testing.T, document []byte, path string, body []byte) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(document)
	if err != nil {
		t.Fatalf("openapi document: %v", err)
	}
	op := doc.Paths.Find(path)
	if op == nil || op.Post == nil || op.Post.RequestBody == nil {
		t.Fatalf("POST %s has no request body in the document", path)
	}
	media := op.Post.RequestBody.Value.Content.Get("application/json")
	if media == nil || media.Schema == nil {
		t.Fatalf("POST %s has no application/json body schema", path)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if err := media.Schema.Value.VisitJSON(v); err != nil {
		t.Errorf("body %s does not match the OpenAPI request schema: %v", body, err)
	}
}

// checkWire checks the requests from one origin: at least one preflight with
// preflightStatus before the first POST, and POSTs answered with posts.
func checkWire(t *testing.T, hits []hit, preflightStatus int, posts ...int) {
	t.Helper()
	var got []int
	preflights := 0
	for _, h := range hits {
		switch {
		case h.Method == http.MethodOptions && h.Path == "/sdk/track":
			if h.Status != preflightStatus {
				t.Errorf("preflight answered %d, want %d", h.Status, preflightStatus)
			}
			preflights++
		case h.Method == http.MethodPost && h.Path == "/sdk/track":
			if preflights == 0 {
				t.Errorf("POST before any preflight")
			}
			got = append(got, h.Status)
		default:
			t.Errorf("unexpected request %s %s", h.Method, h.Path)
		}
	}
	if preflights == 0 || fmt.Sprint(got) != fmt.Sprint(posts) {
		t.Errorf("%d preflights and POSTs answered %v, want at least 1 and %v", preflights, got, posts)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
