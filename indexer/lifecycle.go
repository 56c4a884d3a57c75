package indexer

// The parts of an indexer's life that every chain family shares, written
// once: the run loop (Follow, follow.go), where it starts, the check of a
// target height (index --until), how a run to a target ends on its dead
// letters, the dead-letter gauges, and the checkpoint's SQL. Each family's
// indexer (Cosmos here, indexer/evm) supplies how its chain is read, as a
// Family: start, tip, catch up, dead letters, the check at the tip.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
)

// ErrCheckpointMoved means the checkpoint no longer stood at a batch's
// first height when the batch committed: another writer moved it.
var ErrCheckpointMoved = errors.New("checkpoint moved by another process")

// Start is where an indexer starts.
type Start struct {
	// Next is the checkpoint's next height; 0 when Fresh.
	Next int64
	// Fresh means the chain has no checkpoint: the family picks the first
	// height (start_height, the node's earliest, genesis).
	Fresh bool
	// Resumed means heights were indexed before, or failed (rows in the
	// family's block table or dead letters exist); a checkpoint left by a
	// pruned start alone is still a first start.
	Resumed bool
}

// LoadStart reads the checkpoint of ch, which must belong to ch's family,
// and sets the indexed-height gauge. blocks is the family's block table.
func LoadStart(ctx context.Context, db bun.IDB, ch config.Chain, blocks string, s ChainSeries) (Start, error) {
	cp, err := LoadCheckpoint(ctx, db, ch.ID)
	if errors.Is(err, ErrNoCheckpoint) {
		return Start{Fresh: true}, nil
	}
	if err != nil {
		return Start{}, err
	}
	if config.FamilyOf(cp.Kind) != ch.Family() {
		return Start{}, fmt.Errorf("indexer %s: the checkpoint belongs to kind %q, not %q", ch.ID, cp.Kind, ch.Kind)
	}
	s.IndexedHeight.Set(float64(cp.NextHeight - 1))
	var indexed bool
	if err := db.NewRaw(`SELECT EXISTS (SELECT 1 FROM ? WHERE chain_id = ? AND height > 0)
		OR EXISTS (SELECT 1 FROM dead_letters WHERE chain_id = ?)`, bun.Ident(blocks), ch.ID, ch.ID).Scan(ctx, &indexed); err != nil {
		return Start{}, fmt.Errorf("indexer %s: %w", ch.ID, err)
	}
	return Start{Next: cp.NextHeight, Resumed: indexed}, nil
}

// CheckUntil refuses a target height below the chain's first indexed
// height (its lowest block or dead letter; before anything is indexed, the
// first height to index): nothing through it would ever be indexed.
func CheckUntil(ctx context.Context, db bun.IDB, chainID, blocks string, next, until int64) error {
	var first int64
	if err := db.NewRaw(`SELECT coalesce(least((SELECT min(height) FROM ? WHERE chain_id = ? AND height > 0),
		(SELECT min(height) FROM dead_letters WHERE chain_id = ?)), 0)`, bun.Ident(blocks), chainID, chainID).Scan(ctx, &first); err != nil {
		return fmt.Errorf("indexer %s: first indexed height: %w", chainID, err)
	}
	if first == 0 {
		first = next
	}
	if until < first {
		return fmt.Errorf("indexer %s: height %d is below the chain's first indexed height %d (start_height, or the node's earliest)", chainID, until, first)
	}
	return nil
}

// FinishDeadLetters ends a run to the target height until: it retries
// every dead letter once more (retryAll), then fails naming the first of
// those at or below until that still fail.
func FinishDeadLetters(ctx context.Context, db bun.IDB, chainID string, until int64, retryAll func(context.Context) error) error {
	dls, err := DeadLetters(ctx, db, chainID, false)
	if err != nil || len(dls) == 0 {
		return err
	}
	if err := retryAll(ctx); err != nil {
		return err
	}
	if dls, err = DeadLetters(ctx, db, chainID, false); err != nil {
		return err
	}
	var stuck []DeadLetter // lowest first, as DeadLetters lists them
	for _, d := range dls {
		if d.Height <= until {
			stuck = append(stuck, d)
		}
	}
	if len(stuck) == 0 {
		return nil
	}
	return fmt.Errorf("indexer %s: %d height(s) through %d still fail (first %d: %s); see `chainlens status`",
		chainID, len(stuck), until, stuck[0].Height, stuck[0].LastError)
}

// RefreshDeadLetterGauges sets the chain's dead-letter gauges from the table.
func RefreshDeadLetterGauges(ctx context.Context, db bun.IDB, chainID string, s ChainSeries) {
	if n, lowest, err := DeadLetterStats(ctx, db, chainID); err == nil {
		s.DeadLetters.Set(float64(n))
		s.LowestDeadLetter.Set(float64(lowest))
	}
}

// Advance is a move of a chain's checkpoint past a committed batch.
type Advance struct {
	ChainID, Kind string
	// From is the batch's first height, where the checkpoint must stand;
	// To its last: the checkpoint becomes To+1.
	From, To int64
	// LastTime is the block time of To (nil: unknown, the stored one stays).
	LastTime *time.Time
	// Tip is the node's latest height when the batch was read.
	Tip int64
	// Skip marks a jump over heights nothing was written for (a pruned
	// start): the high water, the highest height written, stays.
	Skip bool
}

// AdvanceCheckpoint moves the checkpoint in the batch's transaction
// (conn): a compare-and-set on the batch's first height, so a batch
// commits only after the one before it (ErrCheckpointMoved otherwise). The
// high water, the highest height ever written, only grows.
func AdvanceCheckpoint(ctx context.Context, conn bun.IConn, a Advance) error {
	if err := checkChainLock(ctx, conn, a.ChainID); err != nil {
		return fmt.Errorf("commit %d..%d: %w", a.From, a.To, err)
	}
	var lastTime any
	if a.LastTime != nil {
		lastTime = *a.LastTime
	}
	highWater := a.To
	if a.Skip {
		highWater = 0 // greatest() keeps the stored one
	}
	res, err := conn.ExecContext(ctx, `INSERT INTO sync_state (chain_id, kind, next_height, last_time, tip_height, high_water, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, now())
		ON CONFLICT (chain_id) DO UPDATE SET next_height = EXCLUDED.next_height,
		last_time = coalesce(EXCLUDED.last_time, sync_state.last_time), tip_height = EXCLUDED.tip_height,
		high_water = greatest(sync_state.high_water, EXCLUDED.high_water), updated_at = now()
		WHERE sync_state.next_height = ?`, a.ChainID, a.Kind, a.To+1, lastTime, a.Tip, highWater, a.From)
	if err != nil {
		return fmt.Errorf("commit %d..%d: checkpoint: %w", a.From, a.To, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("commit %d..%d: %w", a.From, a.To, ErrCheckpointMoved)
	}
	return nil
}
