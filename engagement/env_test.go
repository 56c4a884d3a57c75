package engagement_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cosmos/cosmos-sdk/types/bech32"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/testdb"
)

// now is the fixed clock of the server under test.
var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

type env struct {
	db     *bun.DB
	srv    *httptest.Server
	sk     string // secret key, all scopes
	pk     string // publishable key, origin https://site.example
	client *http.Client
}

// newEnv starts the real API server (route table, app handlers, real keys)
// on a fresh database. handlers, when non-nil, replace app.Handlers.
func newEnv(t testing.TB, handlers func(db *bun.DB) api.Handlers) *env {
	t.Helper()
	db, _ := testdb.New(t)
	cfg, err := config.Parse([]byte("database: {url: postgres://postgres@127.0.0.1:5432/x}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	h := app.Handlers(cfg, db)
	if handlers != nil {
		h = handlers(db)
	}
	log := slog.New(slog.DiscardHandler)
	s, err := api.New(api.Options{DB: db, Config: cfg.API, Ops: route.Table(), Handlers: h, Auth: apikey.NewAuthenticator(db),
		Meter: apikey.NewMeter(db, log), Log: log, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler(cfg.API.Listen))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	sk, _, err := apikey.Create(ctx, db, apikey.Spec{Name: "server", Kind: apikey.Secret, Scopes: []string{"all"},
		QuotaCredits: 1 << 40, QuotaPeriod: time.Hour, RatePerSec: 1e6, RateBurst: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	pk, _, err := apikey.Create(ctx, db, apikey.Spec{Name: "site", Kind: apikey.Publishable, Scopes: []string{"engagement"},
		Origins: []string{"https://site.example"}, QuotaCredits: 1 << 40, QuotaPeriod: time.Hour, RatePerSec: 1e6, RateBurst: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 2000}
	t.Cleanup(tr.CloseIdleConnections)
	return &env{db: db, srv: srv, sk: sk, pk: pk, client: &http.Client{Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request; headers may set Authorization and Content-Type.
func (e *env) do(t testing.TB, method, path string, body io.Reader, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (e *env) count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := e.db.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// problemBody is the part of a problem+json answer the tests check.
type problemBody struct {
	Status        int `json:"status"`
	InvalidParams []struct {
		Name   string `json:"name"`
		Reason string `json:"reason"`
	} `json:"invalid_params"`
}

func invalidField(b []byte) string {
	var p problemBody
	_ = json.Unmarshal(b, &p)
	if len(p.InvalidParams) == 0 {
		return ""
	}
	return p.InvalidParams[0].Name
}

// addr spells raw bytes as a bech32 address with prefix hrp.
func addr(t testing.TB, hrp string, raw []byte) string {
	t.Helper()
	s, err := bech32.ConvertAndEncode(hrp, raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func key20(b byte) []byte { return []byte(strings.Repeat(string([]byte{b}), 20)) }

func day(d int) string { return now.Add(time.Duration(d) * 24 * time.Hour).Format(time.RFC3339) }

func ptr[T any](v T) *T { return &v }
