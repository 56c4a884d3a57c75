package aggregator

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/store"
)

// RetainEvery is how often a running scheduler applies the chains'
// retention settings.
const RetainEvery = 10 * time.Minute

// Pruned is what one retention pass did for one chain.
type Pruned struct {
	ChainID string
	// Bound is the height below which raw rows may go: what the chain's
	// retention setting keeps, lowered to what the jobs reading its raw
	// tables have not read yet.
	Bound int64
	// HeldBy names the job that lowered the bound, if one did.
	HeldBy string
	// Dropped are the partitions dropped (none with dryRun).
	Dropped []store.RawPartition
	// Droppable are the partitions below Bound (what a pass drops).
	Droppable []store.RawPartition
}

// Retain applies the retention setting of each chain that has one: it
// drops the raw partitions every height of which is older than what the
// setting keeps and was read by every job that reads the chain's raw
// tables. With dryRun it only says what it would drop.
func Retain(ctx context.Context, db *bun.DB, chains []config.Chain, jobs []Job, now time.Time, dryRun bool) ([]Pruned, error) {
	var out []Pruned
	for _, ch := range chains {
		if ch.Retention == nil {
			continue
		}
		p, err := retentionBound(ctx, db, ch, jobs, now)
		if err != nil {
			return out, err
		}
		parts, err := store.RawPartitions(ctx, db, ch.ID)
		if err != nil {
			return out, err
		}
		for _, part := range parts {
			if part.To <= p.Bound {
				p.Droppable = append(p.Droppable, part)
			}
		}
		if !dryRun && len(p.Droppable) > 0 {
			if p.Dropped, err = store.DropRawBelow(ctx, db, ch.ID, p.Bound); err != nil {
				return out, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// retentionBound is the height below which ch's raw rows may go.
func retentionBound(ctx context.Context, db bun.IDB, ch config.Chain, jobs []Job, now time.Time) (Pruned, error) {
	p := Pruned{ChainID: ch.ID}
	var next int64
	err := db.NewRaw("SELECT next_height FROM sync_state WHERE chain_id = ?", ch.ID).Scan(ctx, &next)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil // nothing indexed
	}
	if err != nil {
		return p, fmt.Errorf("retention of %s: %w", ch.ID, err)
	}
	var byHeights, byAge int64 = -1, -1
	if k := ch.Retention.KeepHeights; k > 0 {
		byHeights = max(0, next-k)
	}
	if k := ch.Retention.KeepFor.D(); k > 0 {
		// The first height not older than the window: every height below
		// it is (0: none is older).
		before, err := store.HeightBefore(ctx, db, ch.ID, now.Add(-k))
		if err != nil {
			return p, fmt.Errorf("retention of %s: %w", ch.ID, err)
		}
		byAge = 0
		if before > 0 {
			byAge = before + 1
		}
	}
	switch {
	case byHeights >= 0 && byAge >= 0:
		p.Bound = min(byHeights, byAge) // keep whichever keeps more
	case byHeights >= 0:
		p.Bound = byHeights
	default:
		p.Bound = byAge
	}
	// Never what a job of the chain has not read: one that reads its raw
	// events or messages, or one over the chain (its watermark is a height
	// of it), which may join its blocks or txs.
	for _, j := range jobs {
		if rawChain(j) != ch.ID {
			continue
		}
		var wm int64
		err := db.NewRaw("SELECT coalesce((SELECT watermark FROM aggregator_jobs WHERE name = ?), 0)", j.Name()).Scan(ctx, &wm)
		if err != nil {
			return p, fmt.Errorf("retention of %s: %w", ch.ID, err)
		}
		if wm+1 < p.Bound {
			p.Bound, p.HeldBy = wm+1, j.Name()
		}
	}
	return p, nil
}

// rawChain is the chain whose raw tables j may read from its watermark on
// (a height of that chain): the chain of its declared raw inputs, else the
// chain its rows are of; "" for a job over no one chain.
func rawChain(j Job) string {
	if rr, ok := j.(RawReader); ok && rr.RawInputs().ChainID != "" {
		return rr.RawInputs().ChainID
	}
	return j.Tables().ChainID
}

// checkRetained fails a run of j that would read raw rows retention has
// dropped: a job of a chain that starts at a height below what is kept (a
// new job, or one rebuilt from 0) would compute a partial answer.
func checkRetained(ctx context.Context, tx bun.Tx, j Job, watermark int64) error {
	chain := rawChain(j)
	if chain == "" {
		return nil
	}
	pruned, err := store.PrunedBelow(ctx, tx, chain)
	if err != nil {
		return err
	}
	if pruned > 0 && watermark+1 < pruned {
		return fmt.Errorf("%w: %s reads the raw tables of %s from height %d, but retention dropped every height below %d; "+
			"it would build partial rows (reindex those heights from an archive node, or keep its last version)", ErrRawPruned, j.Name(), chain, watermark+1, pruned)
	}
	return nil
}

// ErrRawPruned is the error of a job run that needs raw rows retention
// dropped.
var ErrRawPruned = errors.New("raw data pruned")
