package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/console"
	"github.com/chainlens/chainlens/internal/testdb"
)

// client is a browser-like client of the console: a cookie jar, and the
// session's CSRF token once logged in.
type client struct {
	t    *testing.T
	base string
	http *http.Client
	csrf string
	// origin, when set, is sent as Origin on every POST.
	origin string
}

func newClient(t *testing.T, base string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: base, http: &http.Client{Jar: jar}, origin: base}
}

func (c *client) do(method, path, contentType string, body []byte, header ...string) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if method == "POST" && c.origin != "" {
		req.Header.Set("Origin", c.origin)
	}
	if c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (c *client) login(key string) (*http.Response, []byte) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]string{"key": key})
	resp, body := c.do("POST", "/console/login", "application/json", b)
	if resp.StatusCode == 200 {
		var s struct{ CSRF string }
		if err := json.Unmarshal(body, &s); err != nil || s.CSRF == "" {
			c.t.Fatalf("login answer %s: %v", body, err)
		}
		c.csrf = s.CSRF
	}
	return resp, body
}

func TestConsoleSessions(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	cfg, err := config.Parse([]byte("database: {url: postgres://postgres@127.0.0.1:5432/x}\nconsole: {session_ttl: 10m}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	clock := func() time.Time { return now }
	reg := prometheus.NewRegistry()
	srv := apitest.ServeWith(t, db, cfg, now, func(o *api.Options) {
		o.Registry = reg
		cons := console.New(console.Options{Config: cfg, DB: db, Auth: o.Auth, Gatherer: reg, Admin: o.Handlers.Admin, Now: clock}, "")
		o.Mounts = []api.Mount{{Base: route.Engagement.Base(), Path: "/console", Handler: cons.Handler}}
	})
	spec := func(name string, kind apikey.Kind, scopes ...string) string {
		var origins []string
		if kind == apikey.Publishable {
			origins = []string{"https://site.example"}
		}
		raw, _, err := apikey.Create(ctx, db, apikey.Spec{Name: name, Kind: kind, Scopes: scopes, Origins: origins,
			QuotaCredits: 1000, QuotaPeriod: time.Hour, RatePerSec: 10, RateBurst: 10})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	admin := spec("ops", apikey.Secret, "admin")
	publishable := spec("site", apikey.Publishable, "engagement")

	// The page itself is public (it only shows the login); its policy
	// allows nothing from elsewhere.
	anon := newClient(t, srv.URL)
	resp, body := anon.do("GET", "/console/", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "assets/app.js") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("GET /console/: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	if resp, _ := anon.do("GET", "/console/assets/vendor/uplot/uPlot.iife.min.js", "", nil); resp.StatusCode != 200 {
		t.Fatalf("uPlot asset: %d", resp.StatusCode)
	}

	for _, tc := range []struct {
		name        string
		key         string
		contentType string
		origin      string
		want        int
	}{
		{"no key", "", "application/json", "", 400},
		{"unknown key", "sk_" + strings.Repeat("a", 40), "application/json", "", 401},
		{"a key of every group but not admin", srv.Key, "application/json", "", 403},
		{"a publishable key", publishable, "application/json", "", 403},
		{"a form post (cross-site forms cannot send JSON)", admin, "application/x-www-form-urlencoded", "", 415},
		{"from another site", admin, "application/json", "https://evil.example", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, srv.URL)
			if tc.origin != "" {
				c.origin = tc.origin
			}
			b, _ := json.Marshal(map[string]string{"key": tc.key})
			resp, body := c.do("POST", "/console/login", tc.contentType, b)
			if resp.StatusCode != tc.want || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("login: %d %s, want %d problem+json", resp.StatusCode, body, tc.want)
			}
			if len(resp.Cookies()) > 0 {
				t.Fatalf("refused login set a cookie: %v", resp.Cookies())
			}
			// Without a session, every data call is refused.
			for _, p := range []string{"/console/api/session", "/console/api/chains", "/console/api/jobs", "/console/api/api", "/console/api/keys", "/console/api/campaigns", "/console/api/campaigns/1/report"} {
				if resp, _ := c.do("GET", p, "", nil); resp.StatusCode != 401 {
					t.Errorf("GET %s without a session: %d, want 401", p, resp.StatusCode)
				}
			}
			if resp, _ := c.do("POST", "/console/api/keys", "application/json", []byte(`{"name":"x","scopes":["all"]}`)); resp.StatusCode != 401 {
				t.Errorf("POST api/keys without a session: %d, want 401", resp.StatusCode)
			}
		})
	}

	c := newClient(t, srv.URL)
	resp, body = c.login(admin)
	if resp.StatusCode != 200 {
		t.Fatalf("admin login: %d %s", resp.StatusCode, body)
	}
	ck := resp.Cookies()
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/console" || ck[0].MaxAge != 600 {
		t.Fatalf("session cookie: %+v", ck)
	}
	for _, p := range []string{"/console/api/session", "/console/api/chains?window=1d", "/console/api/jobs", "/console/api/api", "/console/api/keys", "/console/api/campaigns"} {
		if resp, body := c.do("GET", p, "", nil); resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, body)
		}
	}
	if resp, body := c.do("GET", "/console/api/chains?window=2w", "", nil); resp.StatusCode != 400 || !strings.Contains(string(body), "window") {
		t.Errorf("bad window: %d %s", resp.StatusCode, body)
	}

	// Changes need the CSRF token and the console's own origin.
	create := []byte(`{"name":"from-console","scopes":["dex","dex"],"credits":500,"period":"24h"}`)
	token := c.csrf
	c.csrf = ""
	if resp, _ := c.do("POST", "/console/api/keys", "application/json", create); resp.StatusCode != 403 {
		t.Fatalf("create without CSRF token: %d", resp.StatusCode)
	}
	c.csrf = "not-the-token"
	if resp, _ := c.do("POST", "/console/api/keys", "application/json", create); resp.StatusCode != 403 {
		t.Fatalf("create with a wrong CSRF token: %d", resp.StatusCode)
	}
	c.csrf, c.origin = token, "https://evil.example"
	if resp, _ := c.do("POST", "/console/api/keys", "application/json", create); resp.StatusCode != 403 {
		t.Fatalf("create from another origin: %d", resp.StatusCode)
	}
	c.origin = srv.URL
	// The CLI's rules: the same refusals, named by field.
	for _, bad := range []struct{ body, param string }{
		{`{"name":"7","scopes":["all"]}`, "name"},
		{`{"name":"x","scopes":["dexx"]}`, "scopes"},
		{`{"name":"x","scopes":["engagement"],"publishable":true}`, "origins"},
		{`{"name":"x","scopes":["engagement"],"publishable":true,"origins":["https://a.example/path"]}`, "origins"},
		{`{"name":"x","scopes":["all"],"period":"1ms"}`, "period"},
		{`{"name":"x","scopes":["all"],"credits":-1}`, "credits"},
		{`{"name":"x","scopes":["all"],"extra":1}`, ""},
	} {
		resp, body := c.do("POST", "/console/api/keys", "application/json", []byte(bad.body))
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"`+bad.param) {
			t.Errorf("create %s: %d %s, want 400 naming %q", bad.body, resp.StatusCode, body, bad.param)
		}
	}
	resp, body = c.do("POST", "/console/api/keys", "application/json", create)
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	var made struct {
		Key    string
		ID     int64
		Scopes []string
	}
	if err := json.Unmarshal(body, &made); err != nil {
		t.Fatal(err)
	}
	k, err := apikey.NewAuthenticator(db).Authenticate(ctx, made.Key)
	if err != nil || k.Name != "from-console" || k.QuotaCredits != 500 || k.QuotaPeriodS != 86400 || strings.Join(k.Scopes, ",") != "dex" {
		t.Fatalf("created key: %+v %v", k, err)
	}
	if resp, body := c.do("POST", "/console/api/keys/"+itoa(made.ID)+"/revoke", "", nil); resp.StatusCode != 200 {
		t.Fatalf("revoke: %d %s", resp.StatusCode, body)
	}
	if resp, _ := c.do("POST", "/console/api/keys/"+itoa(made.ID)+"/revoke", "", nil); resp.StatusCode != 404 {
		t.Fatalf("revoke twice: %d, want 404", resp.StatusCode)
	}

	// The session ends when it expires...
	now = now.Add(11 * time.Minute)
	if resp, _ := c.do("GET", "/console/api/session", "", nil); resp.StatusCode != 401 {
		t.Fatalf("expired session: %d, want 401", resp.StatusCode)
	}
	now = now.Add(-11 * time.Minute)
	// ... at logout...
	if resp, _ := c.do("POST", "/console/logout", "", nil); resp.StatusCode != 204 {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	if resp, _ := c.do("GET", "/console/api/session", "", nil); resp.StatusCode != 401 {
		t.Fatalf("after logout: %d, want 401", resp.StatusCode)
	}
	// ... and as soon as its key is revoked.
	c = newClient(t, srv.URL)
	if resp, body := c.login(admin); resp.StatusCode != 200 {
		t.Fatalf("login again: %d %s", resp.StatusCode, body)
	}
	if _, err := apikey.Revoke(ctx, db, "ops"); err != nil {
		t.Fatal(err)
	}
	if resp, _ := c.do("GET", "/console/api/chains", "", nil); resp.StatusCode != 401 {
		t.Fatalf("session of a revoked key: %d, want 401", resp.StatusCode)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
