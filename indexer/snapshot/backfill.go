package snapshot

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// statePruned are the texts of a node's refusal to answer a query at a
// height whose state it no longer keeps (cosmos-sdk baseapp: "failed to
// load state at height H; version does not exist (latest height: L)").
var statePruned = []string{"failed to load state at height", "version does not exist", "pruned"}

// IsStatePruned reports whether err is a node's refusal of a query at a
// height whose state it has pruned.
func IsStatePruned(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, s := range statePruned {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// probePath is a query every cosmos-sdk chain answers at any height it
// keeps state for: the bank module's parameters.
const probePath = "/cosmos.bank.v1beta1.Query/Params"

// served reports whether the node answers state queries at h.
func (s *Snapshotter) served(ctx context.Context, h int64) (bool, error) {
	_, err := s.q.ABCIQuery(ctx, probePath, nil, h)
	switch {
	case err == nil:
		return true, nil
	case IsStatePruned(err):
		return false, nil
	default:
		return false, err
	}
}

// firstServed returns the first multiple of every in [from, to] whose
// state the node serves, by bisection (a pruned node keeps a suffix of its
// history), or 0 when it serves none of them.
func (s *Snapshotter) firstServed(ctx context.Context, from, to int64) (int64, error) {
	lo, hi := from/s.every, to/s.every // multiples' indexes; lo is not served
	if ok, err := s.served(ctx, hi*s.every); err != nil || !ok {
		return 0, err
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := s.served(ctx, mid*s.every)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi * s.every, nil
}

// RunBackfill takes the snapshots of the heights a finite run of the
// indexer (`index --until`) commits, while it runs: every multiple of
// SnapshotEvery in order (none passed over, as an archive node serves
// them), from the first height whose state the node serves (a pruned node
// serves only recent state). indexed delivers the indexer's result; after
// a nil one, the snapshots due through its last height are taken before
// RunBackfill returns, each failing height retried a few times; after an
// error it returns nil at once (the indexer reports its own failure).
func (s *Snapshotter) RunBackfill(ctx context.Context, indexed <-chan error) error {
	if s.every <= 0 {
		return nil
	}
	s.backfill = true
	s.log.Info("snapshots during the backfill", "every", s.every)
	for {
		if _, err := s.Poll(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("snapshot failed; retrying", "err", err)
		}
		t := time.NewTimer(s.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case err := <-indexed:
			t.Stop()
			if err != nil {
				return nil
			}
			return s.drain(ctx)
		case <-t.C:
		}
	}
}

// drainAttempts bounds the polls of a height that keeps failing once the
// indexer is done.
const drainAttempts = 5

// drain polls until every due snapshot is taken.
func (s *Snapshotter) drain(ctx context.Context) error {
	var lastErr error
	for attempt := 0; attempt < drainAttempts; attempt++ {
		taken, err := s.Poll(ctx)
		if err == nil && len(taken) == 0 {
			return nil
		}
		if err == nil {
			attempt = -1 // progress: a fresh allowance for the next height
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		lastErr = err
		s.log.Warn("snapshot failed; retrying", "attempt", attempt+1, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * s.PollInterval):
		}
	}
	return fmt.Errorf("snapshots of %s: %w", s.chainID, lastErr)
}
