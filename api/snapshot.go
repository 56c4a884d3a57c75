package api

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/store"
	"github.com/chainlens/chainlens/store/reads"
)

// snapshotKey carries the read transaction of an answer in its context.
type snapshotKey struct{}

// Reader is what an analytics handler reads through: the answer's
// snapshot (one REPEATABLE READ, READ ONLY transaction the server opened
// for it, see Options.DB), else db itself (a handler called outside the
// server, or a server without Options.DB). Every statement of an answer,
// its freshness included, then sees the same committed state: an
// aggregator run that commits between two of them is seen by neither.
func Reader(ctx context.Context, db bun.IDB) bun.IDB {
	if tx, ok := ctx.Value(snapshotKey{}).(bun.Tx); ok {
		return tx
	}
	return db
}

// inSnapshot computes an answer inside one read-only snapshot: from src
// when set (a replica or the primary), else of db. The transaction is
// rolled back at the end: it wrote nothing. replayed is the primary's WAL
// position the snapshot shows everything up to, reads.Current when it
// shows every commit made before it began.
func inSnapshot(ctx context.Context, src ReadSource, db *bun.DB, compute func(context.Context) (*Response, error)) (resp *Response, replayed int64, err error) {
	if src != nil {
		for retried := false; ; retried = true {
			snap, err := src.Begin(ctx)
			if err != nil {
				return nil, reads.Current, err
			}
			resp, err := func() (*Response, error) {
				defer snap.Close() // a panicking handler too
				if err := boundStatements(ctx, snap.Tx); err != nil {
					return nil, err
				}
				return compute(context.WithValue(ctx, snapshotKey{}, snap.Tx))
			}()
			// A replica that went away while the answer was read (stopped,
			// restarted to follow a new primary), or that cancelled it for
			// a conflict with what it replays (a dropped partition), is
			// skipped and the answer read again elsewhere, once.
			if err != nil && !retried && snap.OnReplica() && ctx.Err() == nil {
				if store.Unavailable(err) {
					snap.Skip(err)
					continue
				}
				if store.RecoveryConflict(err) {
					continue
				}
			}
			return resp, snap.Replayed, err
		}
	}
	if db == nil {
		resp, err := compute(ctx)
		return resp, reads.Current, err
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, reads.Current, fmt.Errorf("begin the answer's snapshot: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := boundStatements(ctx, tx); err != nil {
		return nil, reads.Current, err
	}
	resp, err = compute(context.WithValue(ctx, snapshotKey{}, tx))
	return resp, reads.Current, err
}

// boundStatements makes the server itself stop every statement of the
// snapshot at the answer's deadline (statement_timeout, for this
// transaction only). Cancelling the context only abandons the connection's
// wait: Postgres would go on computing an answer nobody reads (seen as 20
// cohort queries still running 13 minutes after their requests had been
// answered 503, at 1 day of a mainnet-shaped dYdX).
func boundStatements(ctx context.Context, tx bun.Tx) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	ms := max(time.Until(deadline).Milliseconds(), 1)
	if _, err := tx.ExecContext(ctx, "SELECT set_config('statement_timeout', ?, true)", strconv.FormatInt(ms, 10)); err != nil {
		return fmt.Errorf("bound the answer's statements: %w", err)
	}
	return nil
}
