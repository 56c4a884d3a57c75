package apikey

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/time/rate"
)

// FlushInterval is how often a Meter writes its counts and reads the counts
// of other processes.
const FlushInterval = 500 * time.Millisecond

// Meter enforces per-key rate limits and credit quotas. Rate limits are
// local token buckets; credits are counted in memory and added to
// api_key_usage in batches, so quotas hold across restarts and processes
// (to within one flush interval).
type Meter struct {
	db  bun.IDB
	log *slog.Logger
	now func() time.Time

	mu       sync.Mutex
	limiters map[int64]*rate.Limiter
	pending  map[usageKey]usageDelta // not yet written
	used     map[usageKey]int64      // credits in the database at the last flush
}

type usageKey struct {
	keyID       int64
	periodStart time.Time
}

type usageDelta struct{ credits, calls int64 }

// NewMeter returns a Meter writing to db.
func NewMeter(db bun.IDB, log *slog.Logger) *Meter {
	return &Meter{
		db: db, log: log, now: time.Now,
		limiters: map[int64]*rate.Limiter{}, pending: map[usageKey]usageDelta{}, used: map[usageKey]int64{},
	}
}

// Decision is the outcome of Allow, with what the X-RateLimit-* headers show.
type Decision struct {
	Allowed    bool
	Reason     string        // why not allowed
	RetryAfter time.Duration // when not allowed
	Limit      int64         // quota credits per period
	Remaining  int64         // credits left after this call
	Reset      time.Time     // end of the quota period
}

// periodStart aligns t to the key's quota period, counted from the Unix epoch.
func periodStart(t time.Time, period time.Duration) time.Time {
	if period <= 0 {
		period = 30 * 24 * time.Hour
	}
	return time.Unix(0, t.UnixNano()-t.UnixNano()%int64(period)).UTC()
}

// Allow takes one token from the key's bucket and reserves cost credits;
// it refuses when either is exhausted.
func (m *Meter) Allow(k *Key, cost int64) Decision {
	now := m.now()
	period := k.QuotaPeriod()
	uk := usageKey{k.ID, periodStart(now, period)}
	d := Decision{Limit: k.QuotaCredits, Reset: uk.periodStart.Add(period)}

	m.mu.Lock()
	defer m.mu.Unlock()
	lim, ok := m.limiters[k.ID]
	if !ok || lim.Limit() != rate.Limit(k.RatePerSec) || lim.Burst() != k.RateBurst {
		lim = rate.NewLimiter(rate.Limit(k.RatePerSec), k.RateBurst)
		m.limiters[k.ID] = lim
	}
	used := m.used[uk] + m.pending[uk].credits
	if used+cost > k.QuotaCredits {
		d.Reason, d.RetryAfter, d.Remaining = "credit quota exhausted for this period", d.Reset.Sub(now), max(0, k.QuotaCredits-used)
		return d
	}
	r := lim.ReserveN(now, 1)
	if delay := r.DelayFrom(now); !r.OK() || delay > 0 {
		r.CancelAt(now)
		d.Reason, d.RetryAfter, d.Remaining = "rate limit exceeded", max(delay, 100*time.Millisecond), k.QuotaCredits-used
		return d
	}
	p := m.pending[uk]
	p.credits += cost
	p.calls++
	m.pending[uk] = p
	d.Allowed, d.Remaining = true, k.QuotaCredits-used-cost
	return d
}

// Refund gives back credits reserved by Allow for a call that was not served
// (a server error or an operation not implemented).
func (m *Meter) Refund(k *Key, cost int64) {
	uk := usageKey{k.ID, periodStart(m.now(), k.QuotaPeriod())}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pending[uk]
	p.credits -= cost
	p.calls--
	m.pending[uk] = p
}

// Flush writes pending counts and refreshes the known totals of every key
// this process has seen in the current periods.
func (m *Meter) Flush(ctx context.Context) error {
	m.mu.Lock()
	batch := m.pending
	m.pending = map[usageKey]usageDelta{}
	for uk, d := range batch { // in flight: still counted until the totals are re-read
		m.used[uk] += d.credits
	}
	m.mu.Unlock()

	type row struct {
		KeyID       int64     `bun:"key_id"`
		PeriodStart time.Time `bun:"period_start"`
		Credits     int64     `bun:"credits"`
	}
	var totals []row
	err := m.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for uk, d := range batch {
			if d.calls == 0 && d.credits == 0 {
				continue
			}
			_, err := tx.NewRaw(`INSERT INTO api_key_usage (key_id, period_start, credits, calls) VALUES (?, ?, ?, ?)
				ON CONFLICT (key_id, period_start) DO UPDATE SET credits = api_key_usage.credits + EXCLUDED.credits,
				calls = api_key_usage.calls + EXCLUDED.calls, updated_at = now()`, uk.keyID, uk.periodStart, d.credits, d.calls).Exec(ctx)
			if err != nil {
				return err
			}
		}
		return tx.NewRaw(`SELECT key_id, period_start, credits FROM api_key_usage WHERE period_start > now() - interval '400 days'
			AND updated_at > now() - interval '1 day'`).Scan(ctx, &totals)
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		for uk, d := range batch { // keep the counts for the next try
			m.used[uk] -= d.credits
			p := m.pending[uk]
			p.credits += d.credits
			p.calls += d.calls
			m.pending[uk] = p
		}
		return fmt.Errorf("flush key usage: %w", err)
	}
	clear(m.used)
	for _, t := range totals {
		m.used[usageKey{t.KeyID, t.PeriodStart.UTC()}] = t.Credits
	}
	return nil
}

// Run flushes every FlushInterval until ctx ends, then flushes once more.
func (m *Meter) Run(ctx context.Context) error {
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			return m.Flush(fctx)
		case <-t.C:
			if err := m.Flush(ctx); err != nil && ctx.Err() == nil {
				m.log.Warn("key usage flush failed; will retry", "err", err)
			}
		}
	}
}

// Usage is the consumption of one key in one period.
type Usage struct {
	KeyID       int64     `bun:"key_id"`
	Name        string    `bun:"name"`
	PeriodStart time.Time `bun:"period_start"`
	Credits     int64     `bun:"credits"`
	Calls       int64     `bun:"calls"`
	Quota       int64     `bun:"quota_credits"`
}

// UsageReport lists the consumption of every key per period, newest first.
func UsageReport(ctx context.Context, db bun.IDB) ([]Usage, error) {
	var out []Usage
	err := db.NewRaw(`SELECT u.key_id, k.name, u.period_start, u.credits, u.calls, k.quota_credits
		FROM api_key_usage u JOIN api_keys k ON k.id = u.key_id ORDER BY u.period_start DESC, u.key_id`).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("key usage: %w", err)
	}
	return out, nil
}
