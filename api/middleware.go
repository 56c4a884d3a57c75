package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/params"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
)

// MaxBodyBytes bounds request bodies (the engagement event limit).
const MaxBodyBytes = 32 << 10

// DefaultMaxAge is the Cache-Control max-age of analytics answers whose
// handler does not say otherwise: about the aggregators' cadence.
const DefaultMaxAge = 30 * time.Second

type ctxKey int

const requestIDKey ctxKey = iota

// RequestID returns the request id of ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// base runs around every request of a listener: request id, panic recovery
// and a body size limit.
func (s *Server) base(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
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

// writeError answers err as problem+json.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	p := problem.From(err, r.URL.Path)
	p.RequestID = RequestID(r.Context())
	if p.Status >= 500 && p.Status != http.StatusNotImplemented && p.Status != http.StatusServiceUnavailable {
		s.opt.Log.Error("request failed", "request_id", p.RequestID, "path", r.URL.Path, "err", err)
	}
	problem.Write(w, p)
}

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

// operation is the middleware chain of one operation.
func (s *Server) operation(op route.Operation, public bool) http.Handler {
	id := op.ID()
	jsonH, isJSON := s.opt.Handlers.JSON[id]
	rawH, isRaw := s.opt.Handlers.Raw[id]
	implemented := isJSON || isRaw
	cost := int64(op.Credits)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() { s.metrics.observe(id, sw.status, time.Since(start)) }()

		var key *apikey.Key
		if !op.NoAuth && !public {
			k, err := s.authenticate(r, op)
			if err != nil {
				s.writeError(sw, r, err)
				return
			}
			key = k
		}
		if r.ContentLength > MaxBodyBytes {
			s.writeError(sw, r, problem.Status(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", MaxBodyBytes))
			return
		}
		vals, err := params.Parse(op, r)
		if err != nil {
			s.writeError(sw, r, err)
			return
		}
		if !implemented {
			s.writeError(sw, r, problem.Status(http.StatusNotImplemented, "the %s group is not implemented yet", op.Group))
			return
		}
		if key != nil {
			d := s.opt.Meter.Allow(key, cost)
			h := sw.Header()
			h.Set("X-RateLimit-Limit", strconv.FormatInt(d.Limit, 10))
			h.Set("X-RateLimit-Remaining", strconv.FormatInt(d.Remaining, 10))
			h.Set("X-RateLimit-Reset", strconv.FormatInt(d.Reset.Unix(), 10))
			if !d.Allowed {
				s.writeError(sw, r, &problem.Error{Status: http.StatusTooManyRequests, Detail: d.Reason, RetryAfter: d.RetryAfter})
				return
			}
			defer func() {
				if sw.status >= 500 {
					s.opt.Meter.Refund(key, cost)
				}
			}()
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.opt.Config.Timeouts.Handler.D())
		defer cancel()
		req := &Request{Op: op, Params: vals, HTTP: r.WithContext(ctx), Key: key, Now: s.opt.Now().UTC()}
		if isRaw {
			if err := rawH(sw, req); err != nil {
				s.writeError(sw, r, err)
			}
			return
		}
		resp, err := jsonH(ctx, req)
		if err != nil {
			s.writeError(sw, r, err)
			return
		}
		s.writeJSON(sw, r, op, resp)
	})
}

// authenticate checks the bearer key, its scope, and for publishable keys
// the operation and the origin.
func (s *Server) authenticate(r *http.Request, op route.Operation) (*apikey.Key, error) {
	authz := r.Header.Get("Authorization")
	raw, ok := strings.CutPrefix(authz, "Bearer ")
	if !ok || raw == "" {
		return nil, problem.Status(http.StatusUnauthorized, "an API key is required: Authorization: Bearer <key>")
	}
	k, err := s.opt.Auth.Authenticate(r.Context(), strings.TrimSpace(raw))
	if errors.Is(err, apikey.ErrUnknownKey) {
		return nil, problem.Status(http.StatusUnauthorized, "the API key is unknown or revoked")
	}
	if err != nil {
		return nil, err
	}
	if !k.Allows(op.Group.Base()) {
		return nil, problem.Status(http.StatusForbidden, "this key is not allowed for the %s group", op.Group.Base())
	}
	if k.Kind == apikey.Publishable {
		if !op.Publishable {
			return nil, problem.Status(http.StatusForbidden, "a publishable key may only call /sdk/track and /campaign")
		}
		if origin := r.Header.Get("Origin"); origin != "" && !k.AllowsOrigin(origin) {
			return nil, problem.Status(http.StatusForbidden, "origin %s is not allowed for this key", origin)
		}
	}
	return k, nil
}

// preflight answers CORS preflight requests of publishable operations.
func (s *Server) preflight(op route.Operation) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
		h.Set("Access-Control-Max-Age", "86400")
		h.Add("Vary", "Origin")
		if origin := r.Header.Get("Origin"); origin != "" {
			h.Set("Access-Control-Allow-Origin", origin)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// writeJSON encodes a handler's answer with freshness headers, an ETag
// (answering 304 to a matching If-None-Match), Cache-Control and gzip.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, op route.Operation, resp *Response) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resp.Body); err != nil {
		s.writeError(w, r, fmt.Errorf("encode %s: %w", op.ID(), err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if op.Analytics() {
		setFreshness(h, resp.Freshness)
		maxAge := resp.MaxAge
		if maxAge == 0 {
			maxAge = DefaultMaxAge
		}
		h.Set("Cache-Control", "private, max-age="+strconv.Itoa(int(maxAge/time.Second)))
	} else {
		h.Set("Cache-Control", "no-store")
	}
	sum := fnv.New128a()
	_, _ = sum.Write(buf.Bytes())
	etag := `"` + hex.EncodeToString(sum.Sum(nil)) + `"`
	h.Set("ETag", etag)
	h.Add("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if buf.Len() >= 1024 && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusOK)
		gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		_, _ = gz.Write(buf.Bytes())
		_ = gz.Close()
		return
	}
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

func etagMatches(header, etag string) bool {
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimPrefix(strings.TrimSpace(part), "W/")
		if part == etag || part == "*" {
			return true
		}
	}
	return false
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(name) == "gzip" && !strings.Contains(strings.ReplaceAll(q, " ", ""), "q=0") {
			return true
		}
	}
	return false
}

// setFreshness writes X-Data-Height and X-Data-Time: one chain's height, or
// chain=height pairs with the oldest block time when several chains are used.
func setFreshness(h http.Header, f Freshness) {
	switch len(f.Chains) {
	case 0:
		return
	case 1:
		h.Set("X-Data-Height", strconv.FormatInt(f.Chains[0].Height, 10))
		h.Set("X-Data-Time", f.Chains[0].Time.UTC().Format(time.RFC3339))
		return
	}
	parts := make([]string, len(f.Chains))
	oldest := f.Chains[0].Time
	for i, c := range f.Chains {
		parts[i] = c.ChainID + "=" + strconv.FormatInt(c.Height, 10)
		if c.Time.Before(oldest) {
			oldest = c.Time
		}
	}
	h.Set("X-Data-Height", strings.Join(parts, ","))
	h.Set("X-Data-Time", oldest.UTC().Format(time.RFC3339))
}

// readyz answers 200 when the database is reachable and migrations are current.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if s.opt.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if err := s.opt.Ready(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"status": "unavailable", "reason": err.Error()})
			return
		}
	}
	_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
}
