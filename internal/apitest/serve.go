package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/app"
)

// Server is the API of a test on loopback and a secret key of every scope.
type Server struct{ URL, Key string }

// Serve builds the API as `chainlens serve` does for cfg (cfg.API as given),
// with the clock fixed at now, and creates a key with room for any test.
func Serve(t testing.TB, db *bun.DB, cfg *config.Config, now time.Time) Server {
	t.Helper()
	return ServeWith(t, db, cfg, now, nil)
}

// ServeWith is Serve with the server's options changed by mutate first
// (nil: none), e.g. to read answers from replicas.
func ServeWith(t testing.TB, db *bun.DB, cfg *config.Config, now time.Time, mutate func(*api.Options)) Server {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	opt := api.Options{DB: db, Config: cfg.API, Ops: route.Table(), Handlers: app.Handlers(cfg, db), Auth: apikey.NewAuthenticator(db),
		Meter: apikey.NewMeter(db, log), Log: log, Now: func() time.Time { return now }}
	if mutate != nil {
		mutate(&opt)
	}
	s, err := api.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler(cfg.API.Listen))
	t.Cleanup(srv.Close)
	key, _, err := apikey.Create(context.Background(), db, apikey.Spec{Name: t.Name(), Kind: apikey.Secret, Scopes: []string{"all"},
		QuotaCredits: 100000, QuotaPeriod: 24 * time.Hour, RatePerSec: 1000, RateBurst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return Server{URL: srv.URL, Key: key}
}

// DefaultAPI returns the default API settings of a config file without
// them; with uncached the response cache is off (tests that change tables
// between two identical requests).
func DefaultAPI(t testing.TB, uncached bool) config.API {
	t.Helper()
	base, err := config.Parse([]byte("database: {url: postgres://postgres@127.0.0.1:5432/x}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if uncached {
		base.API.CacheTTL = 0
	}
	return base.API
}

// RunJobs runs every aggregator job of cfg once, in order, and fails t on
// any error.
func RunJobs(t testing.TB, db *bun.DB, cfg *config.Config) {
	t.Helper()
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Get calls path with the server's key (and the headers of header, a
// name and a value after another).
func (s Server) Get(t testing.TB, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Key)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// GetJSON calls path, requires a 200 that the served OpenAPI document
// accepts, and decodes it into v (numbers in interfaces as json.Number).
func (s Server) GetJSON(t testing.TB, path string, v any) *http.Response {
	t.Helper()
	resp, body := s.Get(t, path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
	}
	_, doc := s.Get(t, "/openapi.json")
	Validate(t, doc, "GET", path, resp, body)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return resp
}
