package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/console"
	"github.com/chainlens/chainlens/internal/history"
	"github.com/chainlens/chainlens/store"
	"github.com/chainlens/chainlens/store/reads"
)

func newServeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Serve the API from the aggregated tables",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			cfg, log, db := e.cfg, e.log, e.db
			serverGC() // an API-only process: the indexers of `run` keep the default
			reg := newRegistry()
			session, closeSession, err := openSession(cmd.Context(), cfg, db)
			if err != nil {
				return err
			}
			defer closeSession()
			parts, err := apiParts(cmd.Context(), cfg, log, db, session, reg)
			if err != nil {
				return err
			}
			return runAll(cmd.Context(), log, parts...)
		}),
	}
}

// newRegistry is the process's Prometheus registry with Go and process metrics.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// apiGCPercent is the API's garbage collection target when GOGC is not set.
// An answer from the cache allocates a few KB (net/http's request and
// headers) over a small live heap, so at the default 100 the collector runs
// many times a second under load and takes a tenth of the throughput
// (docs/PERFORMANCE.md, "Cached answers"); 400 lets the heap grow to five
// times the live data instead of two. GOGC and GOMEMLIMIT still rule.
const apiGCPercent = 400

// serverGC sets the API's garbage collection target unless GOGC is set
// (serve only: in one process with indexers, whose batches make a large
// live heap, five times it would be too much memory).
func serverGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(apiGCPercent)
	}
}

// part is a long-running component of a role.
type part struct {
	name string
	run  func(ctx context.Context) error
}

// apiParts wires the API server, the key usage meter, the data-change
// listener (on session, the primary directly) and, with read_urls, the
// replicas answers are read from.
func apiParts(ctx context.Context, cfg *config.Config, log *slog.Logger, db, session *bun.DB, reg *prometheus.Registry) ([]part, error) {
	meter := apikey.NewMeter(db, log)
	changes := store.NewChanges()
	pool, err := openReplicas(ctx, cfg, log, db, reg)
	if err != nil {
		return nil, err
	}
	if pool.Replicated() {
		changes.TrackReplay()
	}
	handlers := app.HandlersWith(cfg, db, app.Deps{Log: log, Registry: reg, SessionDB: session})
	auth := apikey.NewAuthenticator(db)
	// The operator console, on the engagement listener.
	cons := console.New(console.Options{Config: cfg, DB: db, Auth: auth, Gatherer: reg, Admin: handlers.Admin, Log: log}, cfg.API.Groups[route.Engagement.Base()].Prefix)
	srv, err := api.New(api.Options{
		Config:   cfg.API,
		Ops:      route.Table(),
		Handlers: handlers,
		Auth:     auth,
		Mounts:   []api.Mount{{Base: route.Engagement.Base(), Path: "/console", Handler: cons.Handler}},
		Meter:    meter,
		Log:      log,
		Registry: reg,
		Changes:  changes,
		DB:       db,
		Reads:    pool,
		Ready: func(ctx context.Context) error {
			ok, err := store.SchemaCurrent(ctx, db)
			if err != nil {
				return fmt.Errorf("database: %w", err)
			}
			if !ok {
				return errors.New("migrations pending: run chainlens migrate up")
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	follow := func(ctx context.Context) error { return changes.Run(ctx, session, log) }
	return []part{{"api", srv.Run}, {"key-usage", meter.Run}, {"data-changes", follow}, {"read-replicas", pool.Run}, historyPart(cfg, log, db, reg)}, nil
}

// historyPart samples the process's registry into the console's history
// (console.sample_every, kept console.keep_for).
func historyPart(cfg *config.Config, log *slog.Logger, db *bun.DB, reg *prometheus.Registry) part {
	r := &history.Recorder{DB: db, Gatherer: reg, Every: cfg.Console.SampleEvery.D(), Keep: cfg.Console.KeepFor.D(),
		Instance: history.NewInstance(), Log: log.With("component", "console-history")}
	return part{"console-history", r.Run}
}

// openSession opens database.session_url, a direct connection to the
// primary for the work that needs one session across transactions
// (indexing locks, LISTEN, prepared statements), when it is set; else
// that work shares db. close releases what it opened.
func openSession(ctx context.Context, cfg *config.Config, db *bun.DB) (session *bun.DB, release func(), err error) {
	if cfg.Database.SessionURL == "" {
		return db, func() {}, nil
	}
	// A lock per chain, the listener, the campaign selection's connections.
	session, err = store.Open(ctx, cfg.Database.SessionURL, len(cfg.Chains)+8)
	if err != nil {
		return nil, nil, fmt.Errorf("database.session_url: %w", err)
	}
	return session, func() { _ = session.Close() }, nil
}

// openReplicas opens database.read_urls. A replica that cannot be reached
// at start is opened all the same (its probe keeps it unused until it
// answers): a server starting while one replica is down still serves.
func openReplicas(ctx context.Context, cfg *config.Config, log *slog.Logger, db *bun.DB, reg *prometheus.Registry) (*reads.Pool, error) {
	var replicas []reads.Replica
	for i, u := range cfg.Database.ReadURLs {
		name := fmt.Sprintf("read_urls[%d]", i)
		r, err := store.Open(ctx, u, cfg.Database.MaxConns)
		if err != nil && !store.Unavailable(err) {
			return nil, fmt.Errorf("database.%s: %w", name, err)
		}
		if err != nil {
			log.Warn("read replica unreachable at start; not used until it answers", "replica", name, "err", err)
			if r, err = store.OpenLazy(u, cfg.Database.MaxConns); err != nil {
				return nil, fmt.Errorf("database.%s: %w", name, err)
			}
		}
		replicas = append(replicas, reads.Replica{Name: name, DB: r})
	}
	return reads.New(db, replicas, cfg.Database.MaxReplicaLag.D(), log, reg), nil
}

// runAll runs every part until ctx ends or one fails; the others are then
// stopped, and all errors are joined.
func runAll(ctx context.Context, log *slog.Logger, parts ...part) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := p.run(ctx)
			if err != nil && !errors.Is(err, context.Canceled) {
				log.Error("component stopped", "component", p.name, "err", err)
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
				mu.Unlock()
			}
			cancel()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runUntilDone is runAll for parts that finish on their own (index --until):
// it returns when every part has returned, failing if any failed.
func runUntilDone(ctx context.Context, log *slog.Logger, finite bool, parts ...part) error {
	if !finite {
		return runAll(ctx, log, parts...)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.run(ctx); err != nil {
				log.Error("component stopped", "component", p.name, "err", err)
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// metricsPart serves /metrics, /healthz and /readyz for a process without
// an API (index, aggregate) when metrics.listen is set.
func metricsPart(cfg *config.Config, log *slog.Logger, db *bun.DB, reg *prometheus.Registry) []part {
	if cfg.Metrics.Listen == "" {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"status":"ok"}` + "\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if ok, err := store.SchemaCurrent(r.Context(), db); err != nil || !ok {
			http.Error(w, `{"status":"unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
	})
	srv := &http.Server{Addr: cfg.Metrics.Listen, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return []part{{"metrics", func(ctx context.Context) error {
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
		log.Info("metrics listening", "addr", cfg.Metrics.Listen)
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}}}
}
