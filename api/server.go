package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uptrace/bun"
	"golang.org/x/sync/singleflight"

	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/docsui"
	"github.com/chainlens/chainlens/api/respcache"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/store/reads"
)

// Authenticator checks a raw key; apikey.Authenticator implements it.
type Authenticator interface {
	Authenticate(ctx context.Context, raw string) (*apikey.Key, error)
}

// Meter enforces rate limits and credits; apikey.Meter implements it.
type Meter interface {
	Allow(k *apikey.Key, cost int64) apikey.Decision
	Refund(k *apikey.Key, cost int64)
}

// Options wire a Server.
type Options struct {
	Config   config.API
	Ops      []route.Operation
	Handlers Handlers
	Auth     Authenticator
	Meter    Meter
	Log      *slog.Logger
	Registry *prometheus.Registry
	// Ready reports whether the service can serve (database reachable,
	// migrations current); nil means always ready.
	Ready func(ctx context.Context) error
	Now   func() time.Time
	// Changes tells the response cache when data changes (store.Changes);
	// nil: cached answers are kept at most 1 s.
	Changes ChangeFeed
	// DB is the database analytics answers are read from: each answer is
	// computed in one read-only snapshot of it (Reader). nil: handlers
	// read their own database statement by statement.
	DB *bun.DB
	// Reads, when set, opens the answers' snapshots instead of DB: on a
	// streaming replica within max lag, else on the primary (reads.Pool).
	Reads ReadSource
	// Mounts are further handlers served on the listener of a base family
	// under its host and prefix (the operator console).
	Mounts []Mount
}

// Mount is a handler served beside a base family's operations: Handler
// gets the family's host pattern and serves its own paths under the
// family's prefix.
type Mount struct {
	Base    string
	Handler func(host string) http.Handler
	// Path is the path under the prefix the handler answers, and every
	// path below it ("/console").
	Path string
}

// ReadSource opens the snapshot an analytics answer is read in
// (reads.Pool).
type ReadSource interface {
	Begin(ctx context.Context) (*reads.Snapshot, error)
	// Status reports the replicas, shown by /readyz (nil: none).
	Status() []reads.Status
}

// ChangeFeed reports announced data changes (store.Changes): Seq before a
// read, ChangedSince after it; meaningful only while Listening.
type ChangeFeed interface {
	Seq() int64
	Listening() bool
	ChangedSince(seq int64, chains []string) bool
	SeqReplayed(lsn int64) int64
}

// Server serves the API on one or more listeners.
type Server struct {
	opt     Options
	metrics *metrics
	cache   *respcache.Cache
	// listeners maps a listen address to the base families served there.
	listeners map[string][]string
	// trusted are the reverse proxies whose X-Forwarded-For is believed.
	trusted []netip.Prefix
	// flight shares one computation among identical requests that miss
	// the response cache at once.
	flight singleflight.Group
	// refreshSlots bounds the background recomputations of stale answers.
	refreshSlots chan struct{}
}

// New builds a Server from the route table and handlers.
func New(opt Options) (*Server, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Registry == nil {
		opt.Registry = prometheus.NewRegistry()
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	for id := range opt.Handlers.JSON {
		if !slices.ContainsFunc(opt.Ops, func(o route.Operation) bool { return o.ID() == id }) {
			return nil, fmt.Errorf("api: handler for unknown operation %q", id)
		}
	}
	for id := range opt.Handlers.Admin {
		if !slices.ContainsFunc(route.AdminTable(), func(o route.Operation) bool { return o.ID() == id }) {
			return nil, fmt.Errorf("api: handler for unknown admin operation %q", id)
		}
	}
	for id := range opt.Handlers.Raw {
		if !slices.ContainsFunc(opt.Ops, func(o route.Operation) bool { return o.ID() == id }) {
			return nil, fmt.Errorf("api: handler for unknown operation %q", id)
		}
	}
	m, err := newMetrics(opt.Registry)
	if err != nil {
		return nil, err
	}
	s := &Server{opt: opt, metrics: m, cache: respcache.New(opt.Config.CacheTTL.D(), opt.Config.CacheStale.D(), opt.Changes), listeners: map[string][]string{},
		refreshSlots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))}
	for _, p := range opt.Config.TrustedProxies {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("api.trusted_proxies: %w", err)
		}
		s.trusted = append(s.trusted, prefix.Masked())
	}
	for _, base := range route.Bases {
		addr := opt.Config.Listen
		if g, ok := opt.Config.Groups[base]; ok && g.Listen != "" {
			addr = g.Listen
		}
		s.listeners[addr] = append(s.listeners[addr], base)
	}
	return s, nil
}

// Addrs lists the listen addresses, the default listener first.
func (s *Server) Addrs() []string {
	addrs := make([]string, 0, len(s.listeners))
	for a := range s.listeners {
		if a != s.opt.Config.Listen {
			addrs = append(addrs, a)
		}
	}
	sort.Strings(addrs)
	if _, ok := s.listeners[s.opt.Config.Listen]; ok {
		addrs = append([]string{s.opt.Config.Listen}, addrs...)
	}
	return addrs
}

// Handler returns the HTTP handler of one listen address: the operations of
// the base families placed there, their OpenAPI documents and docs pages,
// health, readiness and metrics, and problem+json answers for unknown paths
// and wrong methods.
func (s *Server) Handler(addr string) http.Handler {
	bases := s.listeners[addr]
	mux := http.NewServeMux()
	type place struct{ host, prefix string }
	docs := map[place][]route.Operation{}
	for _, op := range s.opt.Ops {
		if !slices.Contains(bases, op.Group.Base()) {
			continue
		}
		g := s.opt.Config.Groups[op.Group.Base()]
		public := s.opt.Config.Groups[string(op.Group)].Public
		mux.Handle(op.Method+" "+g.Host+g.Prefix+op.Path, s.operation(op, public))
		if op.Publishable {
			mux.Handle("OPTIONS "+g.Host+g.Prefix+op.Path, s.preflight(op))
		}
		pl := place{g.Host, g.Prefix}
		documented := op
		documented.NoAuth = op.NoAuth || public // the document says no key is needed
		docs[pl] = append(docs[pl], documented)
	}
	if slices.Contains(bases, route.Engagement.Base()) {
		g := s.opt.Config.Groups[route.Engagement.Base()]
		pl := place{g.Host, g.Prefix}
		for _, op := range route.AdminTable() {
			h, ok := s.opt.Handlers.Admin[op.ID()]
			if !ok {
				continue // no admin API (no engagement domain)
			}
			mux.Handle(op.Method+" "+g.Host+g.Prefix+op.Path, s.observe(op)(s.admin(h)))
			docs[pl] = append(docs[pl], op)
		}
	}
	for pl, ops := range docs {
		mux.Handle("GET "+pl.host+pl.prefix+"/openapi.json", s.openAPI(ops, pl.prefix))
		mux.Handle("GET "+pl.host+pl.prefix+"/docs", s.docsPage(pl.prefix))
		mux.Handle("GET "+pl.host+pl.prefix+"/docs/assets/", http.StripPrefix(pl.prefix+"/docs/assets", docsui.Assets()))
	}
	for _, m := range s.opt.Mounts {
		if !slices.Contains(bases, m.Base) {
			continue
		}
		g := s.opt.Config.Groups[m.Base]
		h := m.Handler(g.Host)
		mux.Handle(g.Host+g.Prefix+m.Path, h)
		mux.Handle(g.Host+g.Prefix+m.Path+"/", h)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", s.promHandler())
	mux.Handle("/", s.fallback(mux))
	return s.base(mux)
}

// Run serves every listener until ctx ends, then drains in-flight requests.
func (s *Server) Run(ctx context.Context) error {
	t := s.opt.Config.Timeouts
	var servers []*http.Server
	errc := make(chan error, len(s.listeners))
	for _, addr := range s.Addrs() {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, srv := range servers {
				_ = srv.Close()
			}
			return fmt.Errorf("api: listen %s: %w", addr, err)
		}
		srv := &http.Server{
			Handler:           s.Handler(addr),
			ReadHeaderTimeout: t.ReadHeader.D(),
			ReadTimeout:       t.Read.D(),
			WriteTimeout:      t.Write.D(),
			IdleTimeout:       t.Idle.D(),
			MaxHeaderBytes:    32 << 10,
			ErrorLog:          slog.NewLogLogger(s.opt.Log.Handler(), slog.LevelWarn),
		}
		servers = append(servers, srv)
		s.opt.Log.Info("api listening", "addr", ln.Addr().String(), "groups", s.listeners[addr])
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("api: serve %s: %w", addr, err)
			}
		}()
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	errs := []error{runErr}
	for _, srv := range slices.Backward(servers) {
		errs = append(errs, srv.Shutdown(sctx))
	}
	return errors.Join(errs...)
}

// promHandler serves the registry's metrics.
func (s *Server) promHandler() http.Handler {
	return promhttp.HandlerFor(s.opt.Registry, promhttp.HandlerOpts{})
}
