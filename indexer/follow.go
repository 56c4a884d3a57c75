package indexer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/store"
)

// Family is what a chain family supplies to the run loop every indexer
// shares (Follow): where it starts, where the node stands, how it indexes
// a range of heights, and how it retries its dead letters. Lock,
// checkpoint, target height, dead-letter endings and gauges, backoff and
// giving up are Follow's.
type Family interface {
	// Start returns the next height to index (the checkpoint, else the
	// family's first height) once the node is known to serve the indexed
	// history.
	Start(ctx context.Context) (next int64, err error)
	// Tip asks the node where the chain stands. An error that wraps
	// ErrNodeUnavailable is retried; any other ends the run.
	Tip(ctx context.Context) (Tip, error)
	// CatchUp indexes the heights [next, target] and returns the new next
	// height, also with an error. An error that wraps ErrNodeUnavailable
	// is retried from the returned height; any other ends the run.
	CatchUp(ctx context.Context, next, target int64, tip Tip) (int64, error)
	// RetryDeadLetters retries the chain's dead letters: the due ones, or
	// all of them (a run to a target height ends with them).
	RetryDeadLetters(ctx context.Context, tip Tip, dueOnly bool) error
	// AtTip runs when every height up to the target is indexed, before the
	// loop waits for the next block; it may move next back (a reorg found
	// at the tip). Errors are handled as CatchUp's.
	AtTip(ctx context.Context, next int64) (int64, error)
}

// Tip is where a node stands.
type Tip struct {
	// Latest is the node's latest height.
	Latest int64
	// Target is the last height safe to index: Latest less the chain's
	// confirmations.
	Target int64
	// Status is the family's own answer (the CometBFT status).
	Status any
}

// ErrNodeUnavailable marks a failure of the node or the transport, which
// the run loop retries with backoff until GiveUpAfter.
var ErrNodeUnavailable = errors.New("node unavailable")

// Follow is the run loop of an indexer (see Run): it takes the chain's
// lock, starts where fam says, and follows the node until ctx ends. With
// until > 0 it returns nil once every height through until is committed
// and no dead letter at or below it remains, or an error naming the
// heights that still fail.
type Follow struct {
	DB *bun.DB
	// LockDB holds the chain's session lock for the run; nil: DB.
	LockDB *bun.DB
	Chain  config.Chain
	Blocks string // the family's block table
	Series ChainSeries
	Log    *slog.Logger
	// RetryEvery is how often due dead letters are retried while following.
	RetryEvery time.Duration
	// GiveUpAfter ends the run when the node has not answered (or its
	// blocks could not be read) for this long; 0 retries forever.
	GiveUpAfter time.Duration
	// Wake, when set, cuts the wait for the next block short (a new-block
	// hint from the node).
	Wake <-chan struct{}
}

// maxBackoff bounds the wait between retries of an unavailable node.
const maxBackoff = 30 * time.Second

// Run runs fam until ctx ends (or until is reached). A database outage
// (a restart, a failover: store.Unavailable) does not end it: it waits
// with backoff, takes the lock again and resumes from the checkpoint
// (nothing past it was committed), logging one line when the outage
// begins and one each time the database answers again. Runs that fail again
// within maxBackoff of their start belong to the same outage (a database
// that answers a ping but not the indexer keeps backing off); a run to a
// target height gives up once the outage has lasted GiveUpAfter.
func (f Follow) Run(ctx context.Context, fam Family, until int64) error {
	poll := f.Chain.PollInterval.D()
	var outage time.Time // when the current outage began; zero: none
	wait := poll
	for {
		began := time.Now()
		err := f.run(ctx, fam, until)
		if err == nil || ctx.Err() != nil || errors.Is(err, ErrNodeUnavailable) || !store.Unavailable(err) {
			return err
		}
		if !outage.IsZero() && time.Since(began) >= maxBackoff {
			outage, wait = time.Time{}, poll // it ran a while since: a new outage
		}
		if outage.IsZero() {
			outage = time.Now()
			f.Log.Warn("database unavailable; resuming from the checkpoint once it is back", "err", err)
		}
		if until > 0 && f.GiveUpAfter > 0 && time.Since(outage) >= f.GiveUpAfter {
			return fmt.Errorf("indexer %s: the database was unavailable for %s: %w", f.Chain.ID, f.GiveUpAfter, err)
		}
		for {
			if Sleep(ctx, wait) != nil {
				return stopped(ctx, until)
			}
			wait = min(max(2*wait, 10*time.Millisecond), maxBackoff)
			if f.DB.PingContext(ctx) == nil {
				break
			}
			if until > 0 && f.GiveUpAfter > 0 && time.Since(outage) >= f.GiveUpAfter {
				return fmt.Errorf("indexer %s: the database was unavailable for %s: %w", f.Chain.ID, f.GiveUpAfter, err)
			}
		}
		f.Log.Info("database answers again; resuming from the checkpoint", "after", time.Since(outage).Round(time.Millisecond))
	}
}

// run is one run of Run: from taking the lock to the end or an error.
func (f Follow) run(ctx context.Context, fam Family, until int64) error {
	id := f.Chain.ID
	lockDB := f.LockDB
	if lockDB == nil {
		lockDB = f.DB
	}
	ctx, release, err := LockChain(ctx, lockDB, id)
	if err != nil {
		return err
	}
	defer release()
	next, err := fam.Start(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return stopped(ctx, until)
		}
		return err
	}
	RefreshDeadLetterGauges(ctx, f.DB, id, f.Series)
	if until > 0 && next > until {
		if err := CheckUntil(ctx, f.DB, id, f.Blocks, next, until); err != nil {
			return err
		}
	}
	f.Log.Info("indexer started", "next_height", next, "until", until)
	poll := f.Chain.PollInterval.D()
	wait := poll
	lastRetry := time.Now()
	// Since when the node has not said where it stands, and since when its
	// blocks have failed to be read (a node may answer the first and not
	// the second).
	var unreachable, failing time.Time
	// retry waits before the next attempt after a node failure that began
	// at since; it ends the run once the failure has lasted GiveUpAfter.
	retry := func(since *time.Time, err error, what string) error {
		if since.IsZero() {
			*since = time.Now()
		}
		if f.GiveUpAfter > 0 && time.Since(*since) >= f.GiveUpAfter {
			return fmt.Errorf("indexer %s: %s for %s: %w", id, what, f.GiveUpAfter, err)
		}
		f.Log.Warn("node unavailable; retrying", "what", what, "err", err, "wait", wait)
		if Sleep(ctx, wait) != nil {
			return stopped(ctx, until)
		}
		wait = min(wait*2, maxBackoff)
		return nil
	}
	for {
		tip, err := fam.Tip(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return stopped(ctx, until)
			}
			if !errors.Is(err, ErrNodeUnavailable) {
				return err
			}
			if err := retry(&unreachable, err, "no node answered"); err != nil || ctx.Err() != nil {
				return orStopped(ctx, until, err)
			}
			continue
		}
		unreachable = time.Time{}
		f.Series.NodeHeight.Set(float64(tip.Latest))
		f.Series.Lag.Set(float64(tip.Latest - (next - 1)))
		target := tip.Target
		if until > 0 {
			target = min(target, until)
		}
		if next <= target {
			n, err := fam.CatchUp(ctx, next, target, tip)
			next = n
			switch {
			case err == nil:
				wait, failing = poll, time.Time{}
			case ctx.Err() != nil:
				return stopped(ctx, until)
			case errors.Is(err, ErrNodeUnavailable):
				if err := retry(&failing, err, fmt.Sprintf("blocks from %d could not be read", next)); err != nil || ctx.Err() != nil {
					return orStopped(ctx, until, err)
				}
				continue
			default:
				return err
			}
		}
		if until > 0 && next > until {
			// The target is reached; the stored tip may have been replaced
			// since (a reorg while no indexer ran): AtTip checks it first.
			n, err := fam.AtTip(ctx, next)
			switch {
			case err == nil:
			case ctx.Err() != nil:
				return stopped(ctx, until)
			case errors.Is(err, ErrNodeUnavailable):
				if err := retry(&failing, err, "the stored tip could not be checked"); err != nil || ctx.Err() != nil {
					return orStopped(ctx, until, err)
				}
				continue
			default:
				return err
			}
			if n < next {
				next = n
				continue
			}
			if err := FinishDeadLetters(ctx, f.DB, id, until, func(ctx context.Context) error { return fam.RetryDeadLetters(ctx, tip, false) }); err != nil {
				return err
			}
			f.Log.Info("indexed through the target height", "until", until)
			return nil
		}
		if time.Since(lastRetry) >= f.RetryEvery {
			lastRetry = time.Now()
			if err := fam.RetryDeadLetters(ctx, tip, true); err != nil && ctx.Err() == nil {
				f.Log.Warn("dead-letter retry failed", "err", err)
			}
		}
		if next > tip.Target {
			n, err := fam.AtTip(ctx, next)
			next = n
			switch {
			case err == nil:
			case ctx.Err() != nil:
				return stopped(ctx, until)
			case errors.Is(err, ErrNodeUnavailable):
				f.Log.Warn("tip check failed", "err", err)
			default:
				return err
			}
			if sleepOrWake(ctx, poll, f.Wake) != nil {
				return stopped(ctx, until)
			}
		}
	}
}

// stopped is Run's answer to a cancelled context: a clean stop when
// following the chain, an error when a target height was not reached.
func stopped(ctx context.Context, until int64) error {
	if until > 0 {
		return fmt.Errorf("stopped before reaching height %d: %w", until, ctx.Err())
	}
	return nil
}

// orStopped is err, or stopped when ctx ended meanwhile.
func orStopped(ctx context.Context, until int64, err error) error {
	if err == nil && ctx.Err() != nil {
		return stopped(ctx, until)
	}
	return err
}

// Sleep waits d, or less when ctx ends (its error).
func Sleep(ctx context.Context, d time.Duration) error { return sleepOrWake(ctx, d, nil) }
