// Package aggregator builds the report tables the API serves. Each job reads
// indexed data past its watermark and upserts report rows, in one
// transaction with its new watermark, so a run is idempotent and a crash
// loses nothing. Jobs run on cron schedules; a Postgres advisory lock keeps
// two aggregator processes from running the same job at once.
package aggregator

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
)

// Job is one report family.
type Job interface {
	// Name identifies the job in config, metrics and the aggregator_jobs table.
	Name() string
	// Run advances the job from watermark inside tx and returns the new
	// watermark and the number of report rows written.
	Run(ctx context.Context, tx bun.Tx, watermark int64) (newWatermark, rows int64, err error)
}

// Scheduler runs jobs on their schedules.
type Scheduler struct {
	db      *bun.DB
	jobs    []Job
	cfg     config.Aggregator
	log     *slog.Logger
	metrics *metrics
}

// New returns a Scheduler for jobs. reg may be nil.
func New(db *bun.DB, cfg config.Aggregator, log *slog.Logger, reg prometheus.Registerer, jobs ...Job) (*Scheduler, error) {
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, j := range jobs {
		if seen[j.Name()] {
			return nil, fmt.Errorf("aggregator: job %q registered twice", j.Name())
		}
		seen[j.Name()] = true
	}
	for name := range cfg.Jobs {
		if !seen[name] {
			return nil, fmt.Errorf("aggregator.jobs.%s: no such job", name)
		}
	}
	return &Scheduler{db: db, jobs: jobs, cfg: cfg, log: log, metrics: m}, nil
}

// Jobs lists the names of the registered jobs.
func (s *Scheduler) Jobs() []string {
	names := make([]string, len(s.jobs))
	for i, j := range s.jobs {
		names[i] = j.Name()
	}
	return names
}

// RunOnce runs every job once, in registration order (later jobs may read
// the report tables of earlier ones), and joins their errors.
func (s *Scheduler) RunOnce(ctx context.Context) error {
	var errs []error
	for _, j := range s.jobs {
		if err := s.runJob(ctx, j); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Run runs every job on its cron schedule until ctx ends, then waits for
// running jobs to finish.
func (s *Scheduler) Run(ctx context.Context) error {
	c := cron.New(cron.WithParser(config.CronParser), cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)))
	for _, j := range s.jobs {
		spec := s.cfg.Schedule
		if js, ok := s.cfg.Jobs[j.Name()]; ok {
			spec = js
		}
		if _, err := c.AddFunc(spec, func() {
			if err := s.runJob(ctx, j); err != nil && ctx.Err() == nil {
				s.log.Error("aggregator job failed", "job", j.Name(), "err", err)
			}
		}); err != nil {
			return fmt.Errorf("aggregator: schedule %s: %w", j.Name(), err)
		}
	}
	s.log.Info("aggregator started", "jobs", s.Jobs(), "schedule", s.cfg.Schedule)
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done()
	return nil
}

func lockID(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("chainlens-aggregator:" + name))
	return int64(h.Sum64())
}

// runJob runs one job in a transaction holding the job's advisory lock;
// another process already running it makes this run a no-op.
func (s *Scheduler) runJob(ctx context.Context, j Job) error {
	start := time.Now()
	var rows int64
	var skipped bool
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var locked bool
		if err := tx.NewRaw("SELECT pg_try_advisory_xact_lock(?)", lockID(j.Name())).Scan(ctx, &locked); err != nil {
			return err
		}
		if !locked {
			skipped = true
			return nil
		}
		if _, err := tx.NewRaw("INSERT INTO aggregator_jobs (name) VALUES (?) ON CONFLICT DO NOTHING", j.Name()).Exec(ctx); err != nil {
			return err
		}
		var wm int64
		if err := tx.NewRaw("SELECT watermark FROM aggregator_jobs WHERE name = ? FOR UPDATE", j.Name()).Scan(ctx, &wm); err != nil {
			return err
		}
		newWM, n, err := j.Run(ctx, tx, wm)
		if err != nil {
			return err
		}
		rows = n
		_, err = tx.NewRaw(`UPDATE aggregator_jobs SET watermark = ?, last_run_at = now(), last_duration_ms = ?, last_rows = ?, last_error = NULL
			WHERE name = ?`, newWM, time.Since(start).Milliseconds(), n, j.Name()).Exec(ctx)
		return err
	})
	if skipped {
		return nil
	}
	s.metrics.record(j.Name(), time.Since(start), rows, err)
	if err != nil {
		// Record the failure outside the rolled-back transaction.
		_, _ = s.db.NewRaw(`INSERT INTO aggregator_jobs (name, last_run_at, last_duration_ms, last_error) VALUES (?, now(), ?, ?)
			ON CONFLICT (name) DO UPDATE SET last_run_at = now(), last_duration_ms = EXCLUDED.last_duration_ms, last_error = EXCLUDED.last_error`,
			j.Name(), time.Since(start).Milliseconds(), err.Error()).Exec(context.WithoutCancel(ctx))
		return fmt.Errorf("aggregator job %s: %w", j.Name(), err)
	}
	s.log.Debug("aggregator job done", "job", j.Name(), "rows", rows, "duration", time.Since(start))
	return nil
}

type metrics struct {
	lastRun  *prometheus.GaugeVec
	duration *prometheus.GaugeVec
	rows     *prometheus.CounterVec
	failures *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		lastRun:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chainlens_aggregator_last_run_timestamp_seconds", Help: "Unix time of the last successful run of each job."}, []string{"job"}),
		duration: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chainlens_aggregator_last_duration_seconds", Help: "Duration of the last run of each job."}, []string{"job"}),
		rows:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_aggregator_rows_total", Help: "Report rows written by each job."}, []string{"job"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_aggregator_failures_total", Help: "Failed runs of each job."}, []string{"job"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.lastRun, m.duration, m.rows, m.failures} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("aggregator metrics: %w", err)
			}
		}
	}
	return m, nil
}

func (m *metrics) record(job string, d time.Duration, rows int64, err error) {
	m.duration.WithLabelValues(job).Set(d.Seconds())
	if err != nil {
		m.failures.WithLabelValues(job).Inc()
		return
	}
	m.lastRun.WithLabelValues(job).SetToCurrentTime()
	m.rows.WithLabelValues(job).Add(float64(rows))
}
