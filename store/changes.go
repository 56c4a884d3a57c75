package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
)

// ChangesChannel is the NOTIFY channel on which the database announces
// data changes (triggers of migration 20261122000070): the payload is the
// chain id whose indexed data changed, or "*" when report tables may have.
const ChangesChannel = "chainlens_changes"

// changesPing is the payload Changes sends itself to check that its
// connection still delivers.
const changesPing = "ping"

// Changes follows the database's data-change announcements so that a reader
// can tell whether data it read may have changed since: take Seq before
// reading, then ask ChangedSince. While Changes is not sure it receives
// every announcement (not started, reconnecting, connection silent),
// Listening is false and readers must not rely on it.
type Changes struct {
	seq       atomic.Int64
	listening atomic.Bool
	mu        sync.RWMutex
	all       int64            // seq of the last "*" (or of a possible loss)
	chain     map[string]int64 // seq of each chain's last announcement
	// window is how long Receive waits before pinging the connection.
	window time.Duration
	// replay: after each announcement the primary's WAL insert position is
	// read and kept in marks (TrackReplay), so that a reader on a replica
	// can tell which announcements its snapshot shows (SeqReplayed).
	replay bool
	marks  []walMark // oldest first, both fields increasing
}

// walMark says that every announcement up to seq was of a commit before
// the primary's WAL position lsn.
type walMark struct{ seq, lsn int64 }

// maxMarks bounds the marks kept: at a few announcements a second, the
// last several minutes, more than any replica usable for reads lags.
const maxMarks = 4096

// NewChanges returns a Changes that is not yet listening (see Run).
func NewChanges() *Changes {
	return &Changes{chain: map[string]int64{}, window: 5 * time.Second}
}

// TrackReplay makes Run record where in the primary's WAL each
// announcement's commit lies, for readers on streaming replicas
// (SeqReplayed). Call it before Run; Run's database must be the primary.
func (c *Changes) TrackReplay() { c.replay = true }

// SeqReplayed is the announcement sequence a snapshot shows when it was
// begun on a server that had replayed the primary's WAL up to lsn: every
// announcement up to it is of a commit at or before lsn. It is 0 when no
// recorded announcement is known to be that old (then any announcement
// counts as a change since).
func (c *Changes) SeqReplayed(lsn int64) int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i := sort.Search(len(c.marks), func(i int) bool { return c.marks[i].lsn > lsn })
	if i == 0 {
		return 0
	}
	return c.marks[i-1].seq
}

// markReplay records that every announcement so far was of a commit before
// the primary's WAL flush position. A notification is delivered after its
// commit, and a synchronous commit (every writer of announced data commits
// so) is flushed before that, so the position read after it lies past the
// commit's record. The insert position would be safe for asynchronous
// commits too, but it runs ahead with the WAL of transactions still in
// progress (a batch being copied), which a replica replays only later:
// answers read meanwhile would count as outdated for nothing.
func (c *Changes) markReplay(ctx context.Context, db *bun.DB) error {
	if !c.replay {
		return nil
	}
	seq := c.seq.Load() // Run's loop is the only announcer
	var lsn int64
	if err := db.NewRaw("SELECT (pg_current_wal_flush_lsn() - '0/0'::pg_lsn)::bigint").Scan(ctx, &lsn); err != nil {
		return fmt.Errorf("read the primary's WAL position: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.marks); n > 0 && c.marks[n-1].seq == seq {
		return nil // nothing announced since the last mark
	}
	if len(c.marks) >= maxMarks {
		c.marks = append(c.marks[:0], c.marks[len(c.marks)-maxMarks/2:]...)
	}
	c.marks = append(c.marks, walMark{seq: seq, lsn: lsn})
	return nil
}

// Seq is the current announcement sequence; data read after Seq returned s
// is at least as new as every announcement up to s.
func (c *Changes) Seq() int64 { return c.seq.Load() }

// Listening reports whether every announcement is being received.
func (c *Changes) Listening() bool { return c.listening.Load() }

// ChangedSince reports whether, after seq, a change of any of chains or of
// the report tables was announced (or announcements may have been lost).
func (c *Changes) ChangedSince(seq int64, chains []string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.all > seq {
		return true
	}
	for _, id := range chains {
		if c.chain[id] > seq {
			return true
		}
	}
	return false
}

// announce records one announcement.
func (c *Changes) announce(payload string) {
	if payload == changesPing {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.seq.Add(1)
	if payload == "*" {
		c.all = s
		return
	}
	c.chain[payload] = s
}

// lost marks every earlier read as possibly outdated: announcements may
// have been missed.
func (c *Changes) lost() {
	c.listening.Store(false)
	c.announce("*")
}

// Run listens until ctx ends. The connection is checked by a ping sent to
// itself whenever nothing arrived for a while; a connection that errs or
// stays silent is replaced, and everything read before is then treated as
// changed (announcements may have been lost meanwhile).
func (c *Changes) Run(ctx context.Context, db *bun.DB, log *slog.Logger) error {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		confirmed, err := c.listen(ctx, db)
		c.lost()
		if ctx.Err() != nil {
			break
		}
		if confirmed {
			backoff = 100 * time.Millisecond // it worked for a while: a new blip starts over
		}
		log.Warn("data-change announcements interrupted; cached answers expire after cache_ttl or 1 s meanwhile", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
	return nil
}

// listen receives on one connection until it fails or stays silent. It
// trusts the connection (Listening) only once its own first ping came
// back: LISTEN is in effect from then on, so every later commit is
// announced to it. confirmed reports whether it got that far.
func (c *Changes) listen(ctx context.Context, db *bun.DB) (confirmed bool, err error) {
	// A connection through the pool first: with a multi-host URL it finds
	// the current primary, whose driver the listener then connects with.
	if err := db.PingContext(ctx); err != nil {
		return false, fmt.Errorf("reach the database: %w", err)
	}
	ln := pgdriver.NewListener(db)
	defer ln.Close()
	// A receive waits up to the window whatever ctx says: closing the
	// listener when ctx ends cuts it short (a server stops at once).
	defer context.AfterFunc(ctx, func() { _ = ln.Close() })()
	if err := ln.Listen(ctx, ChangesChannel); err != nil {
		return false, fmt.Errorf("listen %s: %w", ChangesChannel, err)
	}
	if err := pgdriver.Notify(ctx, db, ChangesChannel, changesPing); err != nil {
		return false, fmt.Errorf("ping %s: %w", ChangesChannel, err)
	}
	// Should that ping cross LISTEN on its way, the first silent window
	// sends another before the connection is given up.
	pinged := false
	for {
		_, payload, err := ln.ReceiveTimeout(ctx, c.window)
		var ne net.Error
		switch {
		case err == nil:
			pinged = false
			if !confirmed && payload == changesPing {
				// Anything committed before LISTEN took effect was not
				// announced to us.
				confirmed = true
				c.announce("*")
				if err := c.markReplay(ctx, db); err != nil {
					return false, err
				}
				c.listening.Store(true)
				continue
			}
			c.announce(payload)
			if payload != changesPing {
				if err := c.markReplay(ctx, db); err != nil {
					return confirmed, err
				}
			}
		case errors.As(err, &ne) && ne.Timeout() && !pinged:
			if err := pgdriver.Notify(ctx, db, ChangesChannel, changesPing); err != nil {
				return confirmed, fmt.Errorf("ping %s: %w", ChangesChannel, err)
			}
			pinged = true
		case errors.As(err, &ne) && ne.Timeout():
			return confirmed, fmt.Errorf("receive %s: no answer to a ping within %s", ChangesChannel, c.window)
		default:
			return confirmed, fmt.Errorf("receive %s: %w", ChangesChannel, err)
		}
	}
}
