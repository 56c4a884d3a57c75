package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/testdb"
)

// hostile are values an attacker or a broken client sends.
var hostile = []string{
	"' OR 1=1--", "1; DROP TABLE api_keys", "<script>alert(1)</script>", "../../../../etc/passwd",
	"\x00", "%00", strings.Repeat("9", 400), "-1", "1e309", "NaN", "Infinity", "0x41", "{}", "[]",
	"\"", "\\", "ｆｕｌｌｗｉｄｔｈ", "\u202e", strings.Repeat("A", 5000), "2025-02-30", "true", "",
}

func newServer(t *testing.T, db *bun.DB) (*httptest.Server, string) {
	t.Helper()
	cfg, err := config.Parse([]byte("database: {url: postgres://postgres@127.0.0.1:5432/x}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	s, err := api.New(api.Options{DB: db, Config: cfg.API, Ops: route.Table(), Handlers: app.Handlers(cfg, db), Auth: apikey.NewAuthenticator(db), Meter: apikey.NewMeter(db, log), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler(cfg.API.Listen))
	t.Cleanup(srv.Close)
	key, _, err := apikey.Create(context.Background(), db, apikey.Spec{Name: "h", Kind: apikey.Secret, Scopes: []string{"all"},
		QuotaCredits: 1 << 40, QuotaPeriod: time.Hour, RatePerSec: 1e6, RateBurst: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return srv, key
}

// snapshot counts the rows of every table, to prove requests change nothing.
func snapshot(t *testing.T, db *bun.DB) map[string]int64 {
	t.Helper()
	var tables []string
	if err := db.NewRaw(`SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND relname NOT IN ('api_key_usage')`).Scan(context.Background(), &tables); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, tb := range tables {
		var n int64
		if err := db.NewRaw("SELECT count(*) FROM "+tb).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		out[tb] = n
	}
	return out
}

func fill(path string, value string) string {
	var b strings.Builder
	for _, seg := range strings.Split(path, "/") {
		if seg == "" {
			continue
		}
		b.WriteByte('/')
		if strings.HasPrefix(seg, "{") {
			b.WriteString(url.PathEscape(value))
		} else {
			b.WriteString(seg)
		}
	}
	return b.String()
}

// TestHostileInputWithoutChains sends malformed, oversized and
// injection-style values in every parameter of every route of a server
// with no chain configured: each answer is a 4xx, a 200 or the 503 that
// names the missing configuration — never another 5xx — and no data
// changes. internal/golden's TestHostileInputNeverCausesServerErrors does
// the same on the indexed recordings of every chain family.
func TestHostileInputWithoutChains(t *testing.T) {
	db, _ := testdb.New(t)
	srv, key := newServer(t, db)
	before := snapshot(t, db)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	requests := 0
	send := func(op route.Operation, target string, body io.Reader) {
		req, err := http.NewRequest(op.Method, srv.URL+target, body)
		if err != nil {
			return // not even a URL; nothing to send
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", op.Method, target, err)
		}
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		requests++
		// With no chain configured, the honest 503 names the missing
		// configuration (the chains list, or the key the answer needs).
		honest := resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(rb), `"type":"/problems/not-configured"`)
		if resp.StatusCode >= 500 && !honest {
			t.Errorf("%s %s: %d %s", op.Method, target, resp.StatusCode, rb)
		}
		if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
			t.Errorf("%s %s: %d without problem+json", op.Method, target, resp.StatusCode)
		}
	}
	for _, op := range route.Table() {
		for _, v := range hostile {
			send(op, fill(op.Path, v), nil)
			q := url.Values{}
			for _, p := range op.Params {
				if p.In == route.InQuery {
					q.Set(p.Name, v)
				}
			}
			send(op, fill(op.Path, "1")+"?"+q.Encode(), nil)
			if op.Method == http.MethodPost {
				send(op, fill(op.Path, "1"), strings.NewReader(v))
			}
		}
		if op.Method == http.MethodPost {
			send(op, op.Path, strings.NewReader(`{"name":"`+strings.Repeat("x", 40<<10)+`"}`))
		}
	}
	if after := snapshot(t, db); len(after) != len(before) {
		t.Fatalf("tables changed: %v -> %v", before, after)
	} else {
		for k, v := range before {
			if after[k] != v {
				t.Errorf("table %s: %d rows before, %d after", k, v, after[k])
			}
		}
	}
	t.Logf("%d hostile requests over %d operations", requests, len(route.Table()))
}

func TestOversizedBodyIs413(t *testing.T) {
	db, _ := testdb.New(t)
	srv, key := newServer(t, db)
	req, _ := http.NewRequest("POST", srv.URL+"/track", strings.NewReader(strings.Repeat("x", 40<<10)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
}

// TestSlowClientIsCutOff opens a connection that sends its headers one byte
// at a time: the server must drop it after the read-header timeout.
func TestSlowClientIsCutOff(t *testing.T) {
	db, _ := testdb.New(t)
	cfg, _ := config.Parse([]byte("database: {url: postgres://postgres@127.0.0.1:5432/x}\napi: {listen: 127.0.0.1:0, timeouts: {read_header: 300ms}}\n"), "", nil)
	log := slog.New(slog.DiscardHandler)
	s, err := api.New(api.Options{DB: db, Config: cfg.API, Ops: route.Table(), Handlers: app.Handlers(cfg, db), Auth: apikey.NewAuthenticator(db), Meter: apikey.NewMeter(db, log), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.Handler(cfg.API.Listen), ReadHeaderTimeout: cfg.API.Timeouts.ReadHeader.D()}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	closed := false
	for _, c := range []byte("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 100)) {
		if _, err := conn.Write([]byte{c}); err != nil {
			closed = true
			break
		}
		time.Sleep(20 * time.Millisecond)
		if time.Since(start) > 3*time.Second {
			break
		}
	}
	if !closed {
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 1)
		_, err := conn.Read(buf)
		closed = err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}
	if !closed || time.Since(start) > 3*time.Second {
		t.Fatalf("slow client kept its connection for %v", time.Since(start))
	}
}
