package engagement

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/store"
)

// ErrQueueFull is returned when the event queue has no room; the caller
// should answer 503 with Retry-After.
var ErrQueueFull = errors.New("event queue is full")

// DedupeWindow is how long an event's deduplication key answers with the
// first event's id.
const DedupeWindow = 24 * time.Hour

// RecorderOptions tune a Recorder; zero values take the defaults.
type RecorderOptions struct {
	QueueSize  int           // pending events; default 4096
	BatchSize  int           // most events per transaction; default 256
	CommitWait time.Duration // bound of one batch commit; default 30s
	// Committers is how many batches may commit at once (each on its own
	// connection), so a batch forms while another waits for its WAL
	// flush; default 2 (4 commits smaller batches and costs Postgres more
	// per event: docs/PERFORMANCE.md).
	Committers int
	Log        *slog.Logger
	// Registerer, when set, receives the engagement event metrics.
	Registerer prometheus.Registerer
}

// Recorder stores tracked events durably: requests put their event on a
// bounded queue and wait; committer goroutines (up to Committers, started
// on demand, exiting when the queue is empty) insert queued events in
// batches, one transaction per batch, and answer each request after its
// commit. Events are deduplicated per API key for DedupeWindow.
type Recorder struct {
	db         *bun.DB
	opt        RecorderOptions
	queue      chan *pending
	committers atomic.Int32 // running committer goroutines

	mu       sync.Mutex
	missing  map[string]int64 // "event.attribute" -> events lacking it
	recorded atomic.Int64
	dupes    atomic.Int64
	pruned   atomic.Int64 // unix seconds of the last prune of stale dedupe claims
	batches  atomic.Int64
	maxBatch atomic.Int64

	mMissing *prometheus.CounterVec
	mEvents  *prometheus.CounterVec
	mBatch   prometheus.Histogram
}

type pending struct {
	ev   *Event
	done chan result
}

type result struct {
	id  string
	err error
}

// NewRecorder returns a Recorder over db.
func NewRecorder(db *bun.DB, opt RecorderOptions) *Recorder {
	if opt.QueueSize <= 0 {
		opt.QueueSize = 4096
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = 256
	}
	if opt.CommitWait <= 0 {
		opt.CommitWait = 30 * time.Second
	}
	if opt.Committers <= 0 {
		opt.Committers = 2
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{db: db, opt: opt, queue: make(chan *pending, opt.QueueSize), missing: map[string]int64{}}
	r.mMissing = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "chainlens_engagement_events_missing_recommended_total",
		Help: "Standard events received without a recommended attribute.",
	}, []string{"event", "attribute"})
	r.mEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "chainlens_engagement_events_total",
		Help: "Tracked events by outcome (recorded, duplicate, failed, rejected_queue_full).",
	}, []string{"outcome"})
	r.mBatch = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "chainlens_engagement_event_batch_size",
		Help:    "Events per committed batch.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 10),
	})
	if opt.Registerer != nil {
		for _, c := range []prometheus.Collector{r.mMissing, r.mEvents, r.mBatch} {
			if err := opt.Registerer.Register(c); err != nil {
				opt.Log.Warn("engagement metrics not registered", "err", err)
			}
		}
	}
	return r
}

// MissingRecommended returns how many standard events lacked each
// recommended attribute, keyed "event.attribute".
func (r *Recorder) MissingRecommended() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int64, len(r.missing))
	for k, v := range r.missing {
		out[k] = v
	}
	return out
}

// RecorderStats counts what a Recorder committed since it started.
type RecorderStats struct {
	Recorded   int64 // new events stored
	Duplicates int64 // events answered with an earlier event's id
	Batches    int64 // committed transactions
	MaxBatch   int64 // most events in one transaction
}

// Stats returns the Recorder's counters.
func (r *Recorder) Stats() RecorderStats {
	return RecorderStats{Recorded: r.recorded.Load(), Duplicates: r.dupes.Load(), Batches: r.batches.Load(), MaxBatch: r.maxBatch.Load()}
}

// Record queues ev, waits for its commit and returns the stored id: ev's
// new id, or the first event's id when ev duplicates an event of the last
// 24 h. It fails with ErrQueueFull at once when the queue has no room. When
// ctx ends first the event may still be committed; a retry is deduplicated.
func (r *Recorder) Record(ctx context.Context, ev *Event) (string, error) {
	for _, a := range ev.MissingRecommended {
		r.mu.Lock()
		r.missing[ev.Name+"."+a]++
		r.mu.Unlock()
		r.mMissing.WithLabelValues(ev.Name, a).Inc()
	}
	if ev.ID == "" {
		ev.ID = "evt_" + newULID(ev.ReceivedAt)
	}
	p := &pending{ev: ev, done: make(chan result, 1)}
	select {
	case r.queue <- p:
	default:
		r.mEvents.WithLabelValues("rejected_queue_full").Inc()
		return "", ErrQueueFull
	}
	r.kick()
	select {
	case res := <-p.done:
		return res.id, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// kick starts a committer unless Committers of them run.
func (r *Recorder) kick() {
	for {
		n := r.committers.Load()
		if n >= int32(r.opt.Committers) {
			return
		}
		if r.committers.CompareAndSwap(n, n+1) {
			go r.commitLoop()
			return
		}
	}
}

// commitLoop commits batches until the queue is empty.
func (r *Recorder) commitLoop() {
	batch := make([]*pending, 0, r.opt.BatchSize)
	for {
		batch = batch[:0]
	fill:
		for len(batch) < r.opt.BatchSize {
			select {
			case p := <-r.queue:
				batch = append(batch, p)
			default:
				break fill
			}
		}
		if len(batch) == 0 {
			// Leave first, then look again: an event queued after the
			// drain either is seen here or saw a free committer slot in
			// kick and started one.
			r.committers.Add(-1)
			if len(r.queue) == 0 {
				return
			}
			if r.committers.Add(1) > int32(r.opt.Committers) {
				r.committers.Add(-1)
				return
			}
			continue
		}
		r.commitBatch(batch)
		r.maybePrune()
	}
}

// maybePrune deletes dedupe claims older than twice the window, at most
// once an hour and 10,000 rows at a time (a stale claim is harmless: the
// next event with its key takes it over; pruning only bounds the table).
func (r *Recorder) maybePrune() {
	last := r.pruned.Load()
	nowS := time.Now().Unix()
	if nowS-last < 3600 || !r.pruned.CompareAndSwap(last, nowS) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.opt.CommitWait)
	defer cancel()
	res, err := r.db.ExecContext(ctx, `DELETE FROM tracked_event_dedupe WHERE ctid IN (
		SELECT ctid FROM tracked_event_dedupe WHERE first_seen < now() - ?::interval LIMIT 10000)`,
		fmt.Sprintf("%d seconds", int64(2*DedupeWindow/time.Second)))
	if err != nil {
		r.opt.Log.Warn("prune event dedupe claims", "err", err)
		return
	}
	if n, _ := res.RowsAffected(); n > 0 {
		r.opt.Log.Info("pruned event dedupe claims", "rows", n)
	}
}

// commitBatch commits batch in one transaction; when that fails it retries
// each event alone, so that one bad event fails only its own request.
func (r *Recorder) commitBatch(batch []*pending) {
	ctx, cancel := context.WithTimeout(context.Background(), r.opt.CommitWait)
	defer cancel()
	ids, err := r.insert(ctx, batch)
	if err != nil && len(batch) > 1 {
		r.opt.Log.Warn("event batch failed; committing one by one", "events", len(batch), "err", err)
		for _, p := range batch {
			r.commitBatch([]*pending{p})
		}
		return
	}
	if err != nil {
		r.opt.Log.Error("event commit failed", "event_id", batch[0].ev.ID, "err", err)
		r.mEvents.WithLabelValues("failed").Inc()
		batch[0].done <- result{err: fmt.Errorf("commit event: %w", err)}
		return
	}
	r.mBatch.Observe(float64(len(batch)))
	r.batches.Add(1)
	if n := int64(len(batch)); n > r.maxBatch.Load() {
		r.maxBatch.Store(n) // only the committer writes it
	}
	for i, p := range batch {
		if ids[i] == p.ev.ID {
			r.recorded.Add(1)
			r.mEvents.WithLabelValues("recorded").Inc()
		} else {
			r.dupes.Add(1)
			r.mEvents.WithLabelValues("duplicate").Inc()
		}
		p.done <- result{id: ids[i]}
	}
}

type dedupeKey struct {
	key int64
	dk  string
}

// eventColumns are the tracked_events columns an event is stored with (COPY).
var eventColumns = []string{"id", "key_id", "source", "name", "identity_type", "identity_id", "identity_canonical", "identity_norm",
	"anonymous_id", "click_id", "attributes", "meta", "timestamp", "received_at", "dedupe_key", "utm_campaign", "utm_source", "utm_medium"}

// insert stores the batch and returns the id answered for each event.
func (r *Recorder) insert(ctx context.Context, batch []*pending) ([]string, error) {
	// Duplicates inside the batch follow the first of their key.
	first := map[dedupeKey]*pending{}
	var uniq []*pending
	for _, p := range batch {
		k := dedupeKey{p.ev.KeyID, p.ev.DedupeKey}
		if _, ok := first[k]; !ok {
			first[k] = p
			uniq = append(uniq, p)
		}
	}
	// A fixed lock order keeps concurrent API processes from deadlocking.
	slices.SortFunc(uniq, func(a, b *pending) int {
		return cmp.Or(cmp.Compare(a.ev.KeyID, b.ev.KeyID), cmp.Compare(a.ev.DedupeKey, b.ev.DedupeKey))
	})
	keys := make([]int64, len(uniq))
	dks := make([]string, len(uniq))
	ids := make([]string, len(uniq))
	for i, p := range uniq {
		keys[i], dks[i], ids[i] = p.ev.KeyID, p.ev.DedupeKey, p.ev.ID
	}
	answer := map[dedupeKey]string{}
	// One transaction on one connection: claims, then the events by COPY
	// (cheaper to build and to parse than a multi-row INSERT).
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("event batch: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, fmt.Errorf("event batch: begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	err = func() error {
		tx := conn
		// Claim each key for this window; a claim older than the window is taken over.
		var won []string
		if err := tx.NewRaw(`INSERT INTO tracked_event_dedupe (key_id, dedupe_key, event_id, first_seen)
			SELECT k, d, e, now() FROM unnest(?::bigint[], ?::text[], ?::text[]) AS u(k, d, e)
			ON CONFLICT (key_id, dedupe_key) DO UPDATE SET event_id = EXCLUDED.event_id, first_seen = EXCLUDED.first_seen
			WHERE tracked_event_dedupe.first_seen <= EXCLUDED.first_seen - ?::interval
			RETURNING event_id`, pgdialect.Array(keys), pgdialect.Array(dks), pgdialect.Array(ids),
			fmt.Sprintf("%d seconds", int64(DedupeWindow/time.Second))).Scan(ctx, &won); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("claim dedupe keys: %w", err)
		}
		wonSet := make(map[string]bool, len(won))
		for _, id := range won {
			wonSet[id] = true
		}
		var rows [][]any
		var lostKeys []int64
		var lostDks []string
		for _, p := range uniq {
			if !wonSet[p.ev.ID] {
				lostKeys = append(lostKeys, p.ev.KeyID)
				lostDks = append(lostDks, p.ev.DedupeKey)
				continue
			}
			answer[dedupeKey{p.ev.KeyID, p.ev.DedupeKey}] = p.ev.ID
			rows = append(rows, eventRow(p.ev))
		}
		if len(lostKeys) > 0 {
			rs, err := tx.QueryContext(ctx, `SELECT t.key_id, t.dedupe_key, t.event_id FROM tracked_event_dedupe t
				JOIN unnest(?::bigint[], ?::text[]) AS u(k, d) ON t.key_id = u.k AND t.dedupe_key = u.d`,
				pgdialect.Array(lostKeys), pgdialect.Array(lostDks))
			if err != nil {
				return fmt.Errorf("look up duplicates: %w", err)
			}
			defer rs.Close()
			for rs.Next() {
				var k dedupeKey
				var id string
				if err := rs.Scan(&k.key, &k.dk, &id); err != nil {
					return fmt.Errorf("look up duplicates: %w", err)
				}
				answer[k] = id
			}
			if err := rs.Err(); err != nil {
				return fmt.Errorf("look up duplicates: %w", err)
			}
		}
		if _, err := store.CopyRows(ctx, conn, "tracked_events", eventColumns, rows); err != nil {
			return fmt.Errorf("insert events: %w", err)
		}
		return nil
	}()
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return nil, fmt.Errorf("event batch: commit: %w", err)
	}
	committed = true
	out := make([]string, len(batch))
	for i, p := range batch {
		id, ok := answer[dedupeKey{p.ev.KeyID, p.ev.DedupeKey}]
		if !ok {
			return nil, fmt.Errorf("event %s: no id after commit", p.ev.ID)
		}
		out[i] = id
	}
	return out, nil
}

// eventRow is ev's row in the order of eventColumns.
func eventRow(ev *Event) []any {
	var key any
	if ev.KeyID != 0 {
		key = ev.KeyID
	}
	return []any{ev.ID, key, ev.Source, ev.Name, ev.IdentityType, ev.IdentityID, optional(ev.IdentityCanonical), ev.IdentityNorm,
		optional(ev.AnonymousID), optional(ev.ClickID), jsonOr(ev.Attributes), jsonOr(ev.Meta), ev.Timestamp, ev.ReceivedAt, ev.DedupeKey,
		optional(nonEmpty(ev.UTM.Campaign)), optional(nonEmpty(ev.UTM.Source)), optional(nonEmpty(ev.UTM.Medium))}
}

func optional(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// jsonOr is a JSON column's value: the object given, or {} (the column's default).
func jsonOr(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}
