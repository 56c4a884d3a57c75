package api

import (
	"context"
	"database/sql"
	"fmt"

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
	resp, err = compute(context.WithValue(ctx, snapshotKey{}, tx))
	return resp, reads.Current, err
}
