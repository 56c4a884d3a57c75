package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/store"
	"github.com/chainlens/chainlens/store/reads"
)

// MaxBodyBytes bounds request bodies (the engagement event limit).
const MaxBodyBytes = 32 << 10

// DefaultMaxAge is the Cache-Control max-age of analytics answers whose
// handler does not say otherwise: about the aggregators' cadence.
const DefaultMaxAge = 30 * time.Second

// RequestID returns the request id of ctx, or "".
func RequestID(ctx context.Context) string {
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		return c.id
	}
	return ""
}

// base runs around every request of a listener: request id and panic
// recovery. Body limits are the handlers': an operation's event limit
// (MaxBodyBytes), the admin API's import limit (maxAdminBody).
func (s *Server) base(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
			id = newRequestID()
		}
		w.Header()["X-Request-Id"] = []string{id}
		// The call is the request's one context value: its id, and what
		// an operation's steps learn (one WithContext, one copy of r).
		r = withCall(r, &call{id: id})
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.opt.Log.Error("panic serving request", "request_id", id, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				s.writeError(w, r, errors.New("panic"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// newRequestID is 16 random hex digits: unique enough to correlate logs;
// no secret.
func newRequestID() string {
	var b [16]byte
	v := mrand.Uint64()
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = "0123456789abcdef"[v&0xf]
		v >>= 4
	}
	return string(b[:])
}

// writeError answers err as problem+json.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case problem.ToStatus(err) != http.StatusInternalServerError:
	case store.Unavailable(err):
		// The database is down or failing over (a key lookup, an answer's
		// read): the request may succeed shortly, and nothing is broken here.
		err = problem.Unavailable("the database is unavailable; retry shortly", databaseRetryAfter, err)
	case store.TimedOut(err) && r.Context().Err() == nil:
		// The answer outlived its deadline (timeouts.handler); the
		// database stopped its statement.
		err = problem.Unavailable("the answer took longer than the server's time limit ("+s.opt.Config.Timeouts.Handler.D().String()+
			"); retry later, or ask for a shorter range", databaseRetryAfter, err)
	}
	p := problem.From(err, r.URL.Path)
	p.RequestID = RequestID(r.Context())
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away; nobody reads the answer
	}
	if p.Status >= 500 && p.Status != http.StatusNotImplemented && p.Status != http.StatusServiceUnavailable {
		s.opt.Log.Error("request failed", "request_id", p.RequestID, "path", r.URL.Path, "err", err)
	}
	problem.Write(w, p)
}

// databaseRetryAfter is the Retry-After of an answer the database's outage
// prevented.
const databaseRetryAfter = 5 * time.Second

// fallback answers paths no operation matched: 405 with Allow when another
// method matches, else 404.
func (s *Server) fallback(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodOptions} {
			if m == r.Method {
				continue
			}
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.writeError(w, r, problem.Status(http.StatusMethodNotAllowed, "%s is not allowed here; use %s", r.Method, strings.Join(allow, " or ")))
			return
		}
		s.writeError(w, r, problem.Status(http.StatusNotFound, "no endpoint at %s", r.URL.Path))
	})
}

// statusWriter records the status an answer was sent with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// readyz answers 200 when the database is reachable and migrations are
// current, else 503 problem+json (the cause is logged, not answered).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if s.opt.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if err := s.opt.Ready(ctx); err != nil {
			s.opt.Log.Warn("not ready", "err", err)
			// The cause goes to the log, not to the answer (it may name hosts).
			reason := "the database is unreachable"
			if !store.Unavailable(err) {
				reason = "the database is unreachable or its migrations are not current"
			}
			s.writeError(w, r, problem.Unavailable("not ready: "+reason, databaseRetryAfter, nil))
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	var replicas []reads.Status
	if s.opt.Reads != nil {
		replicas = s.opt.Reads.Status()
	}
	if len(replicas) == 0 {
		_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
		return
	}
	// With read replicas: which ones answers are read from, and where
	// they go when none is usable (the primary).
	from := "replicas"
	if !slices.ContainsFunc(replicas, func(r reads.Status) bool { return r.Usable }) {
		from = "primary"
	}
	_ = json.NewEncoder(w).Encode(struct {
		Status   string         `json:"status"`
		Reads    string         `json:"reads"`
		Replicas []reads.Status `json:"replicas"`
	}{"ready", from, replicas})
}
