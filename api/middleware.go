package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// base runs around every request of a listener: request id and panic
// recovery. Body limits are the handlers': an operation's event limit
// (MaxBodyBytes), the admin API's import limit (maxAdminBody).
func (s *Server) base(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
			id = fmt.Sprintf("%016x", mrand.Uint64()) // unique enough to correlate logs; no secret
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
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
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away; nobody reads the answer
	}
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
		if op.Publishable {
			s.allowOrigin(sw, r)
		}

		var key *apikey.Key
		if !op.NoAuth && !public {
			k, err := s.authenticate(r, op)
			if err != nil {
				s.writeError(sw, r, err)
				return
			}
			key = k
			// The answer is readable by the page only when the caller's own
			// key allows its origin (a secret key's never is).
			if origin := r.Header.Get("Origin"); op.Publishable && origin != "" &&
				(k.Kind != apikey.Publishable || !k.AllowsOrigin(origin)) {
				sw.Header().Del("Access-Control-Allow-Origin")
				sw.Header().Del("Access-Control-Expose-Headers")
			}
		}
		if r.ContentLength > MaxBodyBytes {
			s.writeError(sw, r, problem.Status(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", MaxBodyBytes))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(sw, r.Body, MaxBodyBytes) // a chunked body has no length to check first
		}
		// A cached answer exists only for a URL that parsed and succeeded, so a
		// hit skips parameter parsing (credits are still charged below).
		var ckey string
		var cached *encoded
		state := cacheMiss
		if op.Analytics() && isJSON {
			ckey = cacheKey(op, r)
			cached, state = s.cache.get(ckey, time.Now())
		}
		var vals params.Values
		if cached == nil {
			v, err := params.Parse(op, r)
			if err != nil {
				s.writeError(sw, r, err)
				return
			}
			vals = v
		}
		if !implemented {
			s.writeError(sw, r, problem.Status(http.StatusNotImplemented, "%s %s (%s group) is not implemented yet", op.Method, op.Path, op.Group))
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
		if cached != nil {
			s.metrics.cacheResult(state)
			if state == cacheStale && cached.refreshing.CompareAndSwap(false, true) {
				s.refresh(cached, op, jsonH, ckey, r.Clone(context.WithoutCancel(r.Context())), key)
			}
			writeEncoded(sw, r, cached)
			return
		}
		if ckey != "" && s.cache.enabled() {
			s.metrics.cacheResult(cacheMiss)
			// Identical requests that miss the cache together share one
			// computation (a popular URL expiring under load is computed
			// once, not once per waiting request). It runs detached from any
			// one client's cancellation, bounded by the handler timeout.
			v, err, _ := s.flight.Do(ckey, func() (any, error) {
				return s.computeCached(op, jsonH, ckey, vals, r, key)
			})
			if err != nil {
				s.writeError(sw, r, err)
				return
			}
			writeEncoded(sw, r, v.(*encoded))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.opt.Config.Timeouts.Handler.D())
		defer cancel()
		req := &Request{Op: op, Params: vals, HTTP: r.WithContext(ctx), Key: key, Now: s.opt.Now().UTC(), ClientIP: s.clientIP(r)}
		if isRaw {
			if err := rawH(sw, req); err != nil {
				s.writeError(sw, r, err)
			}
			return
		}
		resp, err := s.answer(ctx, op, jsonH, req)
		if err != nil {
			s.writeError(sw, r, err)
			return
		}
		// An answer sent once is compressed only for a client that takes gzip.
		e, err := encode(op, resp, acceptsGzip(r))
		if err != nil {
			s.writeError(sw, r, err)
			return
		}
		writeEncoded(sw, r, e)
	})
}

// authenticate checks the bearer key, its scope, and for publishable keys
// the operation and the origin.
func (s *Server) authenticate(r *http.Request, op route.Operation) (*apikey.Key, error) {
	raw, ok := bearer(r)
	if !ok {
		return nil, problem.Status(http.StatusUnauthorized, "an API key is required: Authorization: Bearer <key>")
	}
	k, err := s.opt.Auth.Authenticate(r.Context(), raw)
	if errors.Is(err, apikey.ErrUnknownKey) {
		return nil, problem.Status(http.StatusUnauthorized, "the API key is unknown or revoked")
	}
	if err != nil {
		return nil, err
	}
	if !k.Allows(string(op.Group)) {
		return nil, problem.Status(http.StatusForbidden, "this key is not allowed for the %s group", op.Group)
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

// originChecker is implemented by authenticators that can tell whether a
// publishable key allows an origin (apikey.Authenticator does).
type originChecker interface {
	OriginAllowed(ctx context.Context, origin string) (bool, error)
}

// allowOrigin lets a page read the answer of a publishable operation (its
// errors included: a 429's Retry-After, a 401) when its Origin is allowed
// by a live publishable key.
func (s *Server) allowOrigin(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	oc, ok := s.opt.Auth.(originChecker)
	if origin == "" || !ok {
		return
	}
	if allowed, err := oc.OriginAllowed(r.Context(), origin); err != nil || !allowed {
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", "Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Request-Id")
}

// preflight answers CORS preflight requests of publishable operations:
// 204 with the CORS headers for an origin some live publishable key allows,
// 403 otherwise.
func (s *Server) preflight(op route.Operation) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		oc, ok := s.opt.Auth.(originChecker)
		if origin == "" || !ok {
			s.writeError(w, r, problem.Status(http.StatusForbidden, "CORS preflight needs an Origin allowed by a publishable key"))
			return
		}
		allowed, err := oc.OriginAllowed(r.Context(), origin)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if !allowed {
			s.writeError(w, r, problem.Status(http.StatusForbidden, "origin %s is not allowed by any publishable key", origin))
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", op.Method+", OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
		h.Set("Access-Control-Max-Age", "86400")
		h.Add("Vary", "Origin")
		w.WriteHeader(http.StatusNoContent)
	})
}

// computeCached runs an analytics handler detached from the client's
// cancellation (bounded by the handler timeout), encodes its answer and
// keeps it in the response cache.
func (s *Server) computeCached(op route.Operation, h Handler, ckey string, vals params.Values, r *http.Request, key *apikey.Key) (*encoded, error) {
	started, seq := time.Now(), s.cache.seq()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.opt.Config.Timeouts.Handler.D())
	defer cancel()
	req := &Request{Op: op, Params: vals, HTTP: r.WithContext(ctx), Key: key, Now: s.opt.Now().UTC(), ClientIP: s.clientIP(r)}
	resp, err := s.answer(ctx, op, h, req)
	if err != nil {
		return nil, err
	}
	e, err := encode(op, resp, true)
	if err != nil {
		return nil, err
	}
	s.cache.put(ckey, e, started, seq)
	return e, nil
}

// answer runs a JSON handler: an analytics answer inside one read-only
// snapshot of the database, an engagement answer as it is.
func (s *Server) answer(ctx context.Context, op route.Operation, h Handler, req *Request) (*Response, error) {
	if !op.Analytics() {
		return h(ctx, req)
	}
	return inSnapshot(ctx, s.opt.DB, func(ctx context.Context) (*Response, error) { return h(ctx, req) })
}

// refresh recomputes the stale cached answer e in the background (r is a
// clone of the request that found it stale). Recomputations take turns on
// a few slots, so a change announced for many cached answers at once cannot
// crowd out the requests being served (the stale answers are sent
// meanwhile); one whose answer was recomputed while it waited (a miss, or
// an earlier refresh) does nothing. At most one waits per kept answer (its
// refreshing flag). A failure or a panic keeps the stale answer until it
// ages out, and is logged.
func (s *Server) refresh(e *encoded, op route.Operation, h Handler, ckey string, r *http.Request, key *apikey.Key) {
	go func() {
		s.refreshSlots <- struct{}{}
		defer func() { <-s.refreshSlots }()
		defer func() {
			if p := recover(); p != nil {
				s.opt.Log.Error("panic while refreshing a cached answer", "operation", op.ID(), "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				e.refreshing.Store(false)
			}
		}()
		// Recomputed meanwhile (a miss, or an earlier refresh)? Nothing to do.
		if cur, state := s.cache.get(ckey, time.Now()); cur != e || state != cacheStale {
			return
		}
		vals, err := params.Parse(op, r)
		if err == nil {
			_, err, _ = s.flight.Do(ckey, func() (any, error) {
				return s.computeCached(op, h, ckey, vals, r, key)
			})
		}
		if err != nil {
			s.opt.Log.Warn("refreshing a cached answer", "operation", op.ID(), "path", r.URL.Path, "err", err)
			e.refreshing.Store(false)
		}
	}()
}

// encoded is a handler's answer ready to send, kept in the response cache.
type encoded struct {
	body    []byte
	gzipped []byte // nil when the body is too small to be worth compressing
	etag    string
	header  http.Header // Content-Type, Cache-Control, freshness
	chains  []string    // the chains the answer was computed from
	// computed is when the computation started, seq the change sequence
	// then (see responseCache).
	computed time.Time
	seq      int64
	// refreshing is set while a background request recomputes this stale
	// answer, so only one does.
	refreshing atomic.Bool
}

// encode renders a handler's answer: JSON, freshness headers, an ETag and,
// when compress is set, for bodies of 1 KB or more, a gzip variant.
func encode(op route.Operation, resp *Response, compress bool) (*encoded, error) {
	var buf bytes.Buffer
	if raw, ok := resp.Body.(json.RawMessage); ok {
		// Already rendered by the handler (large answers written straight
		// from the rows): sent as is, ended like Encode ends a value.
		buf.Grow(len(raw) + 1)
		buf.Write(raw)
		buf.WriteByte('\n')
	} else {
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(resp.Body); err != nil {
			return nil, fmt.Errorf("encode %s: %w", op.ID(), err)
		}
	}
	e := &encoded{body: buf.Bytes(), header: http.Header{}}
	for _, ch := range resp.Freshness.Chains {
		e.chains = append(e.chains, ch.ChainID)
	}
	e.header.Set("Content-Type", "application/json")
	if op.Analytics() {
		setFreshness(e.header, resp.Freshness)
		maxAge := resp.MaxAge
		if maxAge == 0 {
			maxAge = DefaultMaxAge
		}
		e.header.Set("Cache-Control", "private, max-age="+strconv.Itoa(int(maxAge/time.Second)))
	} else {
		e.header.Set("Cache-Control", "no-store")
	}
	sum := fnv.New128a()
	_, _ = sum.Write(e.body)
	e.etag = `"` + hex.EncodeToString(sum.Sum(nil)) + `"`
	if compress && len(e.body) >= 1024 {
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
		_, _ = zw.Write(e.body)
		_ = zw.Close()
		e.gzipped = gz.Bytes()
	}
	return e, nil
}

// writeEncoded sends an encoded answer, 304 when If-None-Match matches.
func writeEncoded(w http.ResponseWriter, r *http.Request, e *encoded) {
	h := w.Header()
	for k, v := range e.header {
		h[k] = v
	}
	h.Set("ETag", e.etag)
	h.Add("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, e.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := e.body
	if e.gzipped != nil && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = e.gzipped
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// responseCache keeps encoded analytics answers in memory. Report tables
// change only when the indexer or an aggregator job commits, and the
// database announces each such commit (see ChangeFeed): an answer is kept
// until a change of its chains or of the report tables is announced, for at
// most ttl; while announcements are not being received, for at most
// unannouncedTTL. For stale more after that an answer is still sent while
// one background request recomputes it (stale-while-revalidate): a URL
// asked often is always answered from memory, at most one computation
// behind the data.
type responseCache struct {
	ttl, stale time.Duration
	changes    ChangeFeed // nil: answers are kept for min(ttl, unannouncedTTL)
	mu         sync.Mutex
	m          map[string]*encoded
}

// unannouncedTTL is the longest an answer is kept while data changes are
// not being announced to the server.
const unannouncedTTL = time.Second

// maxCacheEntries bounds the cache; it is emptied when full.
const maxCacheEntries = 10_000

func newResponseCache(ttl, stale time.Duration, changes ChangeFeed) *responseCache {
	return &responseCache{ttl: ttl, stale: stale, changes: changes, m: map[string]*encoded{}}
}

// cacheKey identifies an analytics request: operation, path and the query
// with its parameters in a canonical order.
func cacheKey(op route.Operation, r *http.Request) string {
	return op.ID() + "|" + r.URL.Path + "?" + r.URL.Query().Encode()
}

// enabled reports whether answers are kept at all (cache_ttl > 0).
func (c *responseCache) enabled() bool { return c != nil && c.ttl > 0 }

// cacheState is what the cache holds for a key at a given time.
type cacheState int

const (
	cacheMiss  cacheState = iota // nothing usable: compute before answering
	cacheFresh                   // send it
	cacheStale                   // outdated but within stale: send it and recompute
)

// seq is the change sequence to record with an answer about to be computed.
func (c *responseCache) seq() int64 {
	if c.changes == nil {
		return 0
	}
	return c.changes.Seq()
}

// get returns the answer kept for key and whether it is fresh or stale.
func (c *responseCache) get(key string, now time.Time) (*encoded, cacheState) {
	if !c.enabled() {
		return nil, cacheMiss
	}
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if !ok {
		return nil, cacheMiss
	}
	ttl := c.ttl
	listening := c.changes != nil && c.changes.Listening()
	if !listening {
		ttl = min(ttl, unannouncedTTL)
	}
	age := now.Sub(e.computed)
	switch {
	case age < ttl && !(listening && c.changes.ChangedSince(e.seq, e.chains)):
		return e, cacheFresh
	case c.stale > 0 && age < ttl+c.stale:
		// Outdated (expired, or its data announced changed): still sent
		// while it is recomputed, within stale of its expiry.
		return e, cacheStale
	}
	return nil, cacheMiss
}

// put keeps e, computed from data read from started on, after change
// sequence seq.
func (c *responseCache) put(key string, e *encoded, started time.Time, seq int64) {
	if !c.enabled() {
		return
	}
	e.computed, e.seq = started, seq
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCacheEntries {
		clear(c.m)
	}
	c.m[key] = e
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

// readyz answers 200 when the database is reachable and migrations are
// current, else 503 problem+json (the cause is logged, not answered).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if s.opt.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if err := s.opt.Ready(ctx); err != nil {
			s.opt.Log.Warn("not ready", "err", err)
			s.writeError(w, r, problem.Status(http.StatusServiceUnavailable, "not ready: the database is unreachable or its migrations are not current"))
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
}

// bearer returns the key of an "Authorization: Bearer <key>" header; the
// scheme is case-insensitive (RFC 9110 §11.1).
func bearer(r *http.Request) (string, bool) {
	scheme, key, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return "", false
	}
	return key, true
}

// maxAdminBody bounds admin request bodies (a campaigns import file).
const maxAdminBody = 16 << 20

// admin authenticates an admin API request: a secret key with the admin
// scope. Answers are never cached.
func (s *Server) admin(h AdminHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, ok := bearer(r)
		if !ok {
			s.writeError(w, r, problem.Status(http.StatusUnauthorized, "an API key is required: Authorization: Bearer <key>"))
			return
		}
		k, err := s.opt.Auth.Authenticate(r.Context(), raw)
		if errors.Is(err, apikey.ErrUnknownKey) {
			s.writeError(w, r, problem.Status(http.StatusUnauthorized, "the API key is unknown or revoked"))
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if k.Kind != apikey.Secret || !k.Allows(apikey.ScopeAdmin) {
			s.writeError(w, r, problem.Status(http.StatusForbidden, "the admin API needs a secret key with the admin scope"))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxAdminBody)
		w.Header().Set("Cache-Control", "no-store")
		if err := h(w, r); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				err = problem.Status(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", maxAdminBody)
			}
			s.writeError(w, r, err)
		}
	})
}

// clientIP is the address of the client: the peer, or, when the peer is a
// trusted proxy (api.trusted_proxies), the rightmost X-Forwarded-For entry
// that is not a trusted proxy itself (entries left of it are client-set
// and cannot be trusted).
func (s *Server) clientIP(r *http.Request) string {
	peer, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		peer = r.RemoteAddr
	}
	if len(s.trusted) == 0 || !s.isTrusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if _, err := netip.ParseAddr(hop); err != nil {
			return peer // a malformed chain: trust nothing in it
		}
		if !s.isTrusted(hop) {
			return hop
		}
	}
	return peer
}

func (s *Server) isTrusted(ip string) bool {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range s.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
