package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/internal/testdb"
)

// BenchmarkCachedHit is the server's own work for an answer the response
// cache holds (key check, metering, cache lookup, headers, metrics), without
// the network: what scripts/bench-api.sh measures over loopback, minus
// net/http's connection handling. Profile it with -cpuprofile.
func BenchmarkCachedHit(b *testing.B) {
	db, _ := testdb.New(b)
	log := slog.New(slog.DiscardHandler)
	opt := api.Options{Config: testConfig(b), Ops: route.Table(), Handlers: api.Handlers{JSON: map[route.ID]api.Handler{
		route.DexLensActiveWhales: whalesHandler}, Raw: map[route.ID]api.RawHandler{}},
		Auth: apikey.NewAuthenticator(db), Meter: apikey.NewMeter(db, log), Log: log}
	s, err := api.New(opt)
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler(opt.Config.Listen)
	key, _, err := apikey.Create(context.Background(), db, apikey.Spec{Name: "bench", Kind: apikey.Secret, Scopes: []string{"all"},
		QuotaCredits: 1 << 50, QuotaPeriod: 24 * time.Hour, RatePerSec: 1e9, RateBurst: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	get := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/activity/active_whales?limit=20", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Accept-Encoding", "gzip")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	if w := get(); w.Code != http.StatusOK {
		b.Fatalf("%d %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if w := get(); w.Code != http.StatusOK {
				b.Errorf("%d", w.Code)
				return
			}
		}
	})
}
