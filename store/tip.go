package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// IndexedTip is the last height the indexer committed for chainID (its
// checkpoint's next height minus one), 0 before the first commit.
func IndexedTip(ctx context.Context, db bun.IDB, chainID string) (int64, error) {
	var next int64
	err := db.NewRaw("SELECT next_height FROM sync_state WHERE chain_id = ?", chainID).Scan(ctx, &next)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sync state of %s: %w", chainID, err)
	}
	return next - 1, nil
}

// ContiguousTip is IndexedTip capped below chainID's first dead-lettered
// height: the last height below which every height is indexed, the most a
// report job may read.
func ContiguousTip(ctx context.Context, db bun.IDB, chainID string) (int64, error) {
	tip, err := IndexedTip(ctx, db, chainID)
	if err != nil {
		return 0, err
	}
	var dead *int64
	if err := db.NewRaw("SELECT min(height) FROM dead_letters WHERE chain_id = ?", chainID).Scan(ctx, &dead); err != nil {
		return 0, fmt.Errorf("dead letters of %s: %w", chainID, err)
	}
	if dead != nil {
		tip = min(tip, *dead-1)
	}
	return tip, nil
}

// DeleteChainRows deletes chainID's rows from each table (a report job
// rebuilding from scratch).
func DeleteChainRows(ctx context.Context, db bun.IDB, chainID string, tables ...string) error {
	for _, t := range tables {
		if _, err := db.NewRaw("DELETE FROM ? WHERE chain_id = ?", bun.Ident(t), chainID).Exec(ctx); err != nil {
			return fmt.Errorf("clear %s of %s: %w", t, chainID, err)
		}
	}
	return nil
}

// SkipToFirst moves a report job's watermark up to just below the first
// height the indexer stored for chainID (of any family: block_headers),
// so a job over a chain indexed from a recent start height does not walk
// the empty heights below it.
func SkipToFirst(ctx context.Context, db bun.IDB, chainID string, wm int64) (int64, error) {
	var first *int64
	if err := db.NewRaw("SELECT min(height) FROM block_headers WHERE chain_id = ? AND height > 0", chainID).Scan(ctx, &first); err != nil {
		return 0, fmt.Errorf("first indexed height of %s: %w", chainID, err)
	}
	if first != nil && wm < *first-1 {
		return *first - 1, nil
	}
	return wm, nil
}

// NextRange is the heights (from, to] a report job over the CometBFT chain
// chainID reads next from its watermark wm: up to the contiguous indexed
// tip, at most max heights. A watermark of 0 is a rebuild: the job's tables
// lose the chain's rows first. A chain indexed from a late start height
// begins at its first block (the genesis state at height 0 is read by no
// such job). to <= from when nothing is new; from is then the watermark to
// keep.
func NextRange(ctx context.Context, db bun.IDB, chainID string, wm, max int64, tables ...string) (int64, int64, error) {
	tip, err := ContiguousTip(ctx, db, chainID)
	if err != nil {
		return wm, wm, err
	}
	if wm == 0 {
		if err := DeleteChainRows(ctx, db, chainID, tables...); err != nil {
			return 0, 0, err
		}
	}
	if wm, err = SkipToFirst(ctx, db, chainID, wm); err != nil {
		return 0, 0, err
	}
	if tip <= wm {
		return wm, wm, nil
	}
	return wm, min(tip, wm+max), nil
}
