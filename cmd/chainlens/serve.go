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
	"github.com/chainlens/chainlens/store"
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
			parts, err := apiParts(cfg, log, db, reg)
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

// apiParts wires the API server and the key usage meter.
func apiParts(cfg *config.Config, log *slog.Logger, db *bun.DB, reg *prometheus.Registry) ([]part, error) {
	meter := apikey.NewMeter(db, log)
	changes := store.NewChanges()
	srv, err := api.New(api.Options{
		Config:   cfg.API,
		Ops:      route.Table(),
		Handlers: app.HandlersWith(cfg, db, app.Deps{Log: log, Registry: reg}),
		Auth:     apikey.NewAuthenticator(db),
		Meter:    meter,
		Log:      log,
		Registry: reg,
		Changes:  changes,
		DB:       db,
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
	follow := func(ctx context.Context) error { return changes.Run(ctx, db, log) }
	return []part{{"api", srv.Run}, {"key-usage", meter.Run}, {"data-changes", follow}}, nil
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
