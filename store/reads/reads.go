// Package reads chooses the database an analytics answer is read from:
// one of the configured streaming replicas that is at most max lag behind
// the primary, in turn, else the primary. It measures each replica's lag
// by time, not by bytes: every second it samples the primary's WAL
// position, and a replica's lag is how long ago the primary was at the
// position the replica has replayed — zero when it has replayed
// everything, however idle the primary is.
package reads

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"
)

// Current is the replayed position of a snapshot on the primary (or on a
// read server that is not in recovery): it shows every commit made before
// it began.
const Current int64 = -1

// probeEvery is how often the primary and the replicas are sampled.
const probeEvery = time.Second

// Replica is one configured read server.
type Replica struct {
	// Name identifies it in metrics, logs and /readyz without naming a
	// host: "read_urls[0]".
	Name string
	DB   *bun.DB
}

// Status is a replica as last probed.
type Status struct {
	Name   string `json:"name"`
	Usable bool   `json:"usable"`
	// Lag is how far behind the primary it was at the last probe; null
	// while it cannot be told (not reached yet).
	LagSeconds *float64 `json:"lag_seconds"`
	// Error says why it is not used, when it is not.
	Error string `json:"error,omitempty"`
}

// Pool answers which database to read from. Its zero replicas case is the
// primary alone.
type Pool struct {
	primary  *bun.DB
	replicas []*replica
	maxLag   time.Duration
	log      *slog.Logger
	now      func() time.Time
	next     atomic.Uint32

	mu      sync.Mutex
	samples []sample // the primary's WAL position over the last minutes, oldest first

	lagGauge    *prometheus.GaugeVec
	usableGauge *prometheus.GaugeVec
	readsTotal  *prometheus.CounterVec
}

type sample struct {
	at  time.Time
	lsn int64
}

type replica struct {
	Replica
	mu     sync.Mutex
	probed bool
	usable bool
	lag    time.Duration
	err    string
}

// New returns a pool reading from replicas when they are at most maxLag
// behind primary, else from primary. reg may be nil.
func New(primary *bun.DB, replicas []Replica, maxLag time.Duration, log *slog.Logger, reg prometheus.Registerer) *Pool {
	p := &Pool{primary: primary, maxLag: maxLag, log: log, now: time.Now,
		lagGauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chainlens_db_replica_lag_seconds",
			Help: "How far each read replica was behind the primary at its last probe."}, []string{"replica"}),
		usableGauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chainlens_db_replica_usable",
			Help: "1 when a read replica is reachable and within database.max_replica_lag, else 0."}, []string{"replica"}),
		readsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_db_answer_reads_total",
			Help: "Analytics answers read, by the server they were read from (primary or a replica)."}, []string{"server"}),
	}
	for _, r := range replicas {
		p.replicas = append(p.replicas, &replica{Replica: r, err: "not probed yet"})
	}
	if reg != nil && len(replicas) > 0 {
		reg.MustRegister(p.lagGauge, p.usableGauge, p.readsTotal)
	}
	return p
}

// Replicated reports whether replicas are configured.
func (p *Pool) Replicated() bool { return len(p.replicas) > 0 }

// Run probes the primary and the replicas every second until ctx ends.
func (p *Pool) Run(ctx context.Context) error {
	if !p.Replicated() {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		p.Probe(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Probe samples the primary's WAL position, then each replica's replayed
// position, and decides which replicas are usable.
func (p *Pool) Probe(ctx context.Context) {
	if !p.Replicated() {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var lsn int64
	err := p.primary.NewRaw("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint").Scan(pctx, &lsn)
	if err == nil {
		p.record(sample{at: p.now(), lsn: lsn})
	} // else: the primary is away (a failover?): replicas are judged by the last samples
	for _, r := range p.replicas {
		// Each its own budget: a replica that does not answer must not
		// leave none for the next.
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		p.probeReplica(rctx, r)
		cancel()
	}
}

// record keeps s, and enough samples to tell lags up to twice the max.
func (p *Pool) record(s sample) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.samples = append(p.samples, s)
	keep := s.at.Add(-2*p.maxLag - 10*probeEvery)
	i := 0
	for i < len(p.samples)-1 && p.samples[i].at.Before(keep) {
		i++
	}
	p.samples = p.samples[i:]
}

// lagOf answers how long ago the primary was at replayed: zero when the
// replica has replayed the newest sample; ok is false without samples.
func (p *Pool) lagOf(replayed int64, now time.Time) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.samples) == 0 {
		return 0, false
	}
	if replayed >= p.samples[len(p.samples)-1].lsn {
		return 0, true
	}
	// The newest sample the replica has replayed; the primary was past
	// replayed from the sample after it on.
	for i := len(p.samples) - 1; i > 0; i-- {
		if p.samples[i-1].lsn <= replayed {
			return now.Sub(p.samples[i].at), true
		}
	}
	return now.Sub(p.samples[0].at), true // behind every sample kept: at least that
}

func (p *Pool) probeReplica(ctx context.Context, r *replica) {
	var replayed sql.NullInt64
	err := r.DB.NewRaw("SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint").Scan(ctx, &replayed)
	lag, known := time.Duration(0), true
	switch {
	case err != nil:
	case !replayed.Valid:
		// Not in recovery: a promoted replica, or the primary itself. What
		// it shows is its own latest state.
	default:
		lag, known = p.lagOf(replayed.Int64, p.now())
	}
	r.mu.Lock()
	was := r.usable
	r.probed = true
	switch {
	case err != nil:
		r.usable, r.err = false, "unreachable"
	case !known:
		r.usable, r.err = false, "the primary's position is not known yet"
	case lag > p.maxLag:
		r.usable, r.err = false, fmt.Sprintf("lags %s behind the primary (max_replica_lag %s)", lag.Round(time.Millisecond), p.maxLag)
	default:
		r.usable, r.err = true, ""
	}
	r.lag = lag
	usable, reason := r.usable, r.err
	r.mu.Unlock()
	if known && err == nil {
		p.lagGauge.WithLabelValues(r.Name).Set(lag.Seconds())
	}
	p.usableGauge.WithLabelValues(r.Name).Set(boolGauge(usable))
	if was != usable {
		if usable {
			p.log.Info("read replica in use", "replica", r.Name, "lag", lag)
		} else {
			p.log.Warn("read replica skipped", "replica", r.Name, "reason", reason, "err", err)
		}
	}
}

// Status reports every replica as last probed (nil without replicas).
func (p *Pool) Status() []Status {
	var out []Status
	for _, r := range p.replicas {
		r.mu.Lock()
		s := Status{Name: r.Name, Usable: r.usable, Error: r.err}
		if r.probed && r.err != "unreachable" && r.err != "the primary's position is not known yet" {
			secs := r.lag.Seconds()
			s.LagSeconds = &secs
		}
		r.mu.Unlock()
		out = append(out, s)
	}
	return out
}

// Snapshot is an open read: a REPEATABLE READ, READ ONLY transaction and
// what it can see.
type Snapshot struct {
	Tx bun.Tx
	// Replayed is the WAL position the server had replayed before the
	// snapshot began (every commit up to it is visible), or Current.
	Replayed int64
	// Server is "primary" or the replica's name.
	Server  string
	conn    *bun.Conn
	replica *replica
	pool    *Pool
}

// OnReplica reports whether the snapshot was opened on a replica.
func (s *Snapshot) OnReplica() bool { return s.replica != nil }

// Skip marks the snapshot's replica unusable until its next probe finds
// it well: it failed while the snapshot was read (it stopped, or its
// connection broke). Nothing for a snapshot on the primary.
func (s *Snapshot) Skip(err error) {
	if s.replica == nil {
		return
	}
	s.pool.skip(s.replica, err)
}

// Close ends the snapshot (it wrote nothing) and gives its connection back.
func (s *Snapshot) Close() {
	_ = s.Tx.Rollback()
	if s.conn != nil {
		_ = s.conn.Close()
	}
}

// Begin opens a snapshot on a usable replica, in turn, else on the
// primary. A replica that fails to open one is skipped until its next
// probe finds it well.
func (p *Pool) Begin(ctx context.Context) (*Snapshot, error) {
	if n := len(p.replicas); n > 0 {
		start := int(p.next.Add(1))
		for i := range n {
			r := p.replicas[(start+i)%n]
			r.mu.Lock()
			usable := r.usable
			r.mu.Unlock()
			if !usable {
				continue
			}
			s, err := beginReplica(ctx, r)
			if err == nil {
				s.replica, s.pool = r, p
				p.readsTotal.WithLabelValues(r.Name).Inc()
				return s, nil
			}
			if ctx.Err() != nil {
				return nil, err
			}
			p.skip(r, err)
		}
	}
	tx, err := p.primary.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("begin the answer's snapshot: %w", err)
	}
	if p.Replicated() {
		p.readsTotal.WithLabelValues("primary").Inc()
	}
	return &Snapshot{Tx: tx, Replayed: Current, Server: "primary"}, nil
}

// skip marks r unreachable until its next probe.
func (p *Pool) skip(r *replica, err error) {
	r.mu.Lock()
	r.usable, r.err = false, "unreachable"
	r.mu.Unlock()
	p.usableGauge.WithLabelValues(r.Name).Set(0)
	p.log.Warn("read replica skipped", "replica", r.Name, "err", err)
}

// beginReplica reads how far r has replayed, then begins the snapshot on
// the same server: replay only moves forward, so the snapshot shows at
// least every commit up to that position.
func beginReplica(ctx context.Context, r *replica) (*Snapshot, error) {
	conn, err := r.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var replayed sql.NullInt64
	if err := conn.NewRaw("SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint").Scan(ctx, &replayed); err != nil {
		_ = conn.Close()
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	s := &Snapshot{Tx: tx, Replayed: Current, Server: r.Name, conn: &conn}
	if replayed.Valid {
		s.Replayed = replayed.Int64
	}
	return s, nil
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
