package indexer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/chainlens/chainlens/chains"
)

// Reindex rewrites heights already indexed (below the checkpoint): raw and
// domain rows are replaced height by height in transactions; the checkpoint
// does not move. Use it after an adapter learns new rows.
func (x *Cosmos) Reindex(ctx context.Context, heights []int64) error {
	lockDB := x.SessionDB
	if lockDB == nil {
		lockDB = x.db
	}
	ctx, release, err := LockChain(ctx, lockDB, x.cfg.ID)
	if err != nil {
		return err
	}
	defer release()
	if err := x.useNodeDescriptors(ctx); err != nil {
		return err
	}
	cp, err := LoadCheckpoint(ctx, x.db, x.cfg.ID)
	if err != nil {
		return fmt.Errorf("reindex %s: %w", x.cfg.ID, err)
	}
	for _, h := range heights {
		if h < 1 || h >= cp.NextHeight {
			return fmt.Errorf("reindex %s: height %d is not indexed yet (indexed through %d)", x.cfg.ID, h, cp.NextHeight-1)
		}
	}
	st, err := x.src.Status(ctx)
	if err != nil {
		return fmt.Errorf("reindex %s: %w", x.cfg.ID, err)
	}
	enc := chains.AttrAuto
	if st.Base64Attributes() {
		enc = chains.AttrBase64
	}
	done := 0
	for _, run := range contiguousRuns(heights, x.cfg.BatchSize) {
		batch := make([]*fetched, len(run))
		var wg sync.WaitGroup
		sem := make(chan struct{}, x.cfg.Concurrency)
		for i, h := range run {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				batch[i] = x.fetch(ctx, h, enc, false)
			}()
		}
		wg.Wait()
		if ctx.Err() != nil {
			releaseAll(batch)
			return ctx.Err()
		}
		// A height that cannot be fetched again keeps its indexed rows: the
		// batch is not written (the writer would clear the whole range and
		// leave the failed height empty), and the reindex stops.
		var failed []error
		for _, f := range batch {
			if f.err != nil {
				failed = append(failed, fmt.Errorf("height %d: %w", f.height, f.err))
			}
		}
		if len(failed) > 0 {
			releaseAll(batch)
			return fmt.Errorf("reindex %s: heights %d..%d left as they were (%d of %d heights rewritten before them): %w",
				x.cfg.ID, run[0], run[len(run)-1], done, len(heights), errors.Join(failed...))
		}
		_, err := x.w.commit(ctx, batch, false, st.LatestHeight)
		releaseAll(batch)
		if err != nil {
			return fmt.Errorf("reindex %s: %w", x.cfg.ID, err)
		}
		done += len(run)
	}
	x.log.Info("reindexed", "heights", len(heights))
	return nil
}

// HeightsWithMessage lists the indexed heights holding a message of typeURL.
func (x *Cosmos) HeightsWithMessage(ctx context.Context, typeURL string) ([]int64, error) {
	var hs []int64
	if err := x.db.NewRaw("SELECT DISTINCT height FROM messages WHERE chain_id = ? AND type_url = ? ORDER BY height", x.cfg.ID, typeURL).
		Scan(ctx, &hs); err != nil {
		return nil, fmt.Errorf("heights with %s on %s: %w", typeURL, x.cfg.ID, err)
	}
	return hs, nil
}

// contiguousRuns splits sorted, distinct heights into runs of consecutive
// heights of at most max each.
func contiguousRuns(hs []int64, max int) [][]int64 {
	var runs [][]int64
	for i := 0; i < len(hs); {
		j := i + 1
		for j < len(hs) && hs[j] == hs[j-1]+1 && j-i < max {
			j++
		}
		runs = append(runs, hs[i:j])
		i = j
	}
	return runs
}
