package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/respcache"
	"github.com/chainlens/chainlens/api/route"
	"github.com/prometheus/client_golang/prometheus"
)

// Each middleware step alone, around a handler that answers 200 "next"
// (the whole chain is tested through the server in server_test.go).

// testServer is a server with metrics and a discarded log.
func testServer(t *testing.T, h Handlers, meter Meter) *Server {
	t.Helper()
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return &Server{opt: Options{Handlers: h, Meter: meter, Log: slog.New(slog.DiscardHandler)}, metrics: m,
		cache: respcache.New(0, 0, nil)}
}

var nextOK = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "next") })

// serve runs one request through mw around nextOK, inside a started call.
func serve(mw middleware, r *http.Request, c *call) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	if c == nil {
		c = &call{}
	}
	mw(nextOK).ServeHTTP(&statusWriter{ResponseWriter: rec}, withCall(r, c))
	return rec
}

func op(t *testing.T, id string) route.Operation {
	t.Helper()
	for _, o := range route.Table() {
		if o.ID().String() == id {
			return o
		}
	}
	t.Fatalf("no operation %s", id)
	return route.Operation{}
}

func TestLimitBody(t *testing.T) {
	s := testServer(t, Handlers{}, nil)
	for _, c := range []struct {
		name   string
		length int64
		status int
	}{
		{"within", MaxBodyBytes, 200},
		{"declared too large", MaxBodyBytes + 1, 413},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/track", strings.NewReader("{}"))
			r.ContentLength = c.length
			if got := serve(s.limitBody, r, nil).Code; got != c.status {
				t.Fatalf("status %d, want %d", got, c.status)
			}
		})
	}
}

func TestImplemented(t *testing.T) {
	s := testServer(t, Handlers{JSON: map[route.ID]Handler{route.Dex2Pairs: nil}}, nil)
	for _, c := range []struct {
		id     string
		status int
		body   string
	}{
		{"GET /dex/pairs", 200, "next"},
		{"GET /trading/volume", 501, "GET /trading/volume (dex2 group) is not implemented yet"},
	} {
		rec := serve(s.implemented(op(t, c.id)), httptest.NewRequest("GET", "/x", nil), nil)
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.body) {
			t.Errorf("%s: %d %s, want %d %q", c.id, rec.Code, rec.Body, c.status, c.body)
		}
	}
}

func TestParse(t *testing.T) {
	s := testServer(t, Handlers{}, nil)
	o := op(t, "GET /dex/trades/{denom0}/{denom1}")
	for _, c := range []struct {
		name   string
		query  string
		cached bool
		status int
	}{
		{"valid", "limit=5", false, 200},
		{"invalid, named", "limit=x", false, 400},
		{"a cached answer skips parsing", "limit=x", true, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := &call{}
			if c.cached {
				cl.cached = &respcache.Entry{}
			}
			r := httptest.NewRequest("GET", "/dex/trades/uatom/untrn?"+c.query, nil)
			r.SetPathValue("denom0", "uatom")
			r.SetPathValue("denom1", "untrn")
			rec := serve(s.parse(o), r, cl)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			if c.status == 400 && !strings.Contains(rec.Body.String(), `"name":"limit"`) {
				t.Fatalf("the problem does not name the parameter: %s", rec.Body)
			}
		})
	}
}

// meterStub grants or refuses every call and counts refunds.
type meterStub struct {
	allow   bool
	refunds int64
}

func (m *meterStub) Allow(*apikey.Key, int64) apikey.Decision {
	return apikey.Decision{Allowed: m.allow, Reason: "quota used", RetryAfter: time.Minute, Limit: 10, Remaining: 3, Reset: time.Unix(100, 0)}
}
func (m *meterStub) Refund(_ *apikey.Key, cost int64) { m.refunds += cost }

func TestMeter(t *testing.T) {
	o := op(t, "GET /dex/pairs")
	for _, c := range []struct {
		name        string
		allow       bool
		key         bool
		inner       int // status the rest of the chain answers
		status      int
		wantRefunds int64
	}{
		{"no key: not metered", false, false, 200, 200, 0},
		{"allowed", true, true, 200, 200, 0},
		{"refused", false, true, 200, 429, 0},
		{"a server error is refunded", true, true, 500, 500, int64(o.Credits)},
		{"a client error is not", true, true, 404, 404, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &meterStub{allow: c.allow}
			s := testServer(t, Handlers{}, m)
			cl := &call{}
			if c.key {
				cl.key = &apikey.Key{}
			}
			rec := httptest.NewRecorder()
			inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(c.inner) })
			s.meter(o)(inner).ServeHTTP(&statusWriter{ResponseWriter: rec}, withCall(httptest.NewRequest("GET", "/dex/pairs", nil), cl))
			if rec.Code != c.status || m.refunds != c.wantRefunds {
				t.Fatalf("status %d, refunds %d; want %d, %d", rec.Code, m.refunds, c.status, c.wantRefunds)
			}
			if c.key && rec.Header().Get("X-RateLimit-Remaining") != "3" {
				t.Fatalf("rate limit headers: %v", rec.Header())
			}
		})
	}
}

func TestObserveStartsACall(t *testing.T) {
	s := testServer(t, Handlers{}, nil)
	var seen *call
	h := s.observe(op(t, "GET /dex/pairs"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = callOf(r)
		seen.ckey = "set by a step"
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/dex/pairs", nil))
	if seen == nil || seen.ckey != "set by a step" {
		t.Fatal("the steps share no call")
	}
}
