package api

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/uptrace/bun"
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

// inSnapshot computes an answer inside one read-only snapshot of db. The
// transaction is rolled back at the end: it wrote nothing.
func inSnapshot(ctx context.Context, db *bun.DB, compute func(context.Context) (*Response, error)) (*Response, error) {
	if db == nil {
		return compute(ctx)
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("begin the answer's snapshot: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	return compute(context.WithValue(ctx, snapshotKey{}, tx))
}
