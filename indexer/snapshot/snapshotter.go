package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/chainlens/chainlens/store/snapshots"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/store"
)

// Snapshotter takes a snapshot of one cosmos chain at every multiple of
// config.Chain.SnapshotEvery that the indexer has committed.
//
// Each poll it reads the chain's checkpoint (the indexed height) and its
// newest stored snapshot, and takes the multiples of SnapshotEvery between
// them in ascending order, each with the time of its block from the blocks
// table. When more than MaxPending multiples are due (the snapshotter fell
// behind: first start on an indexed chain, a historical backfill, a long
// outage), it takes only the latest one and never goes back for the
// others: old state is often pruned on the node, and a backfill of history
// through abci_query would be slow.
//
// A due height that fails (the query fails, or the height is a dead letter
// without a block row) stops the poll and is retried at the next one; if
// it keeps failing, later multiples pile up past MaxPending and the
// snapshotter moves on to the latest. Storing is idempotent, so two
// snapshotters of one chain only duplicate work.
type Snapshotter struct {
	db      bun.IDB
	q       Querier
	chainID string
	prefix  string
	every   int64
	log     *slog.Logger

	// Modules are the module accounts whose balances are snapshotted;
	// default DefaultModules.
	Modules []string
	// Delegators are the accounts whose delegations are snapshotted
	// (config staking.providers on the Hub).
	Delegators []string
	// PollInterval is the wait between polls; default the chain's
	// poll_interval, else 1s.
	PollInterval time.Duration
	// MaxPending is how many due multiples are taken in order in one poll;
	// beyond it only the latest is. Default 1.
	MaxPending int
	// State, when set, is the chain kind's adapter of state tables (the
	// dYdX market catalog): its queries are taken with every snapshot
	// and its rows stored in the snapshot's transaction.
	State chains.StateAdapter

	// backfill is set by RunBackfill: a due height whose state the node
	// has pruned moves the start to the first height it serves (from)
	// instead of failing the poll.
	backfill bool
	from     int64
}

// NewSnapshotter returns the snapshotter of chain (its ID, Bech32Prefix,
// SnapshotEvery and PollInterval), querying q (a *cometbft.Client) and
// storing in db, where the chain's indexer writes its checkpoint and blocks.
func NewSnapshotter(db bun.IDB, q Querier, chain config.Chain, log *slog.Logger) *Snapshotter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	poll := chain.PollInterval.D()
	if poll <= 0 {
		poll = time.Second
	}
	return &Snapshotter{
		db: db, q: q, chainID: chain.ID, prefix: chain.Bech32Prefix, every: chain.SnapshotEvery,
		log:     log.With("chain", chain.ID, "component", "snapshot"),
		Modules: append([]string(nil), DefaultModules...), PollInterval: poll, MaxPending: 1,
	}
}

// Run polls until ctx ends and then returns nil. It returns at once when
// snapshots are off (SnapshotEvery 0). Failed polls are logged and retried.
func (s *Snapshotter) Run(ctx context.Context) error {
	if s.every <= 0 {
		s.log.Info("state snapshots are off (snapshot_every is 0)")
		return nil
	}
	s.log.Info("snapshotter started", "every", s.every, "modules", s.Modules)
	for {
		if _, err := s.Poll(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.log.Warn("snapshot failed; retrying at the next poll", "err", err)
		}
		t := time.NewTimer(s.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// Poll takes and stores the snapshots due now and returns their heights.
// It does nothing before the chain has a checkpoint.
func (s *Snapshotter) Poll(ctx context.Context) ([]int64, error) {
	if s.every <= 0 {
		return nil, nil
	}
	cp, err := indexer.LoadCheckpoint(ctx, s.db, s.chainID)
	if errors.Is(err, indexer.ErrNoCheckpoint) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	last, err := snapshots.LastHeight(ctx, s.db, s.chainID)
	if err != nil {
		return nil, err
	}
	var heights []int64
	var passed int64
	if s.backfill {
		heights = DueInOrder(max(last, s.from-1), cp.NextHeight-1, s.every, backfillBatch)
	} else {
		heights, passed = Due(max(last, s.from-1), cp.NextHeight-1, s.every, max(s.MaxPending, 1))
	}
	if passed > 0 {
		s.log.Warn("snapshotter fell behind; taking only the latest due height", "last", last,
			"indexed", cp.NextHeight-1, "height", heights[0], "passed_over", passed)
	}
	var taken []int64
	for _, h := range heights {
		if h < s.from {
			continue
		}
		err := s.takeAt(ctx, h)
		if err != nil && s.backfill && IsStatePruned(err) {
			latest := heights[len(heights)-1]
			first, ferr := s.firstServed(ctx, h, latest)
			if ferr != nil {
				return taken, ferr
			}
			if first == 0 {
				s.log.Warn("the node serves no state of these heights (pruned); no snapshot of them", "from", h, "to", latest)
				s.from = latest + 1
				return taken, nil
			}
			s.log.Warn("the node does not serve state before this height (pruned); snapshots start there", "from", first, "pruned_at", h)
			s.from = first
			continue
		}
		if err != nil {
			return taken, err
		}
		taken = append(taken, h)
	}
	return taken, nil
}

// takeAt takes and stores the snapshot at height h.
func (s *Snapshotter) takeAt(ctx context.Context, h int64) error {
	var t time.Time
	err := s.db.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height = ?", s.chainID, h).Scan(ctx, &t)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("snapshot %s at %d: no indexed block (a dead letter?)", s.chainID, h)
	}
	if err != nil {
		return fmt.Errorf("snapshot %s at %d: block time: %w", s.chainID, h, err)
	}
	start := time.Now()
	rows, err := Take(ctx, s.q, s.chainID, h, s.prefix, s.Modules, s.Delegators)
	if err != nil {
		return err
	}
	denoms, err := RuleHolderDenoms(ctx, s.db, s.chainID)
	if err != nil {
		return err
	}
	if len(denoms) > 0 {
		holders, err := TakeHolders(ctx, s.q, h, denoms)
		if err != nil {
			return fmt.Errorf("snapshot %s at %d: %w", s.chainID, h, err)
		}
		rows = append(rows, holders...)
	}
	state, tables, err := s.takeState(ctx, h)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		// The kind's state tables compare every snapshot with their newest
		// rows, so the next snapshot makes up for this one; the rest of
		// the snapshot is kept.
		s.log.Warn("state tables not taken at this snapshot; the next one retries", "height", h, "err", err)
		state, tables = chains.NewRows(), nil
	}
	var changed int64
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := snapshots.Store(ctx, tx, s.chainID, h, t, rows); err != nil {
			return err
		}
		changed, err = StoreState(ctx, tx, tables, state)
		if err != nil {
			return fmt.Errorf("snapshot %s at %d: %w", s.chainID, h, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.log.Info("state snapshot stored", "height", h, "block_time", t, "rows", len(rows), "state_rows_changed", changed,
		"skipped", Skipped(rows), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// takeState takes the rows of the chain kind's state tables at h (none
// without a StateAdapter) and makes sure their partitions exist.
func (s *Snapshotter) takeState(ctx context.Context, h int64) (*chains.Rows, []chains.StateTable, error) {
	state := chains.NewRows()
	if s.State == nil {
		return state, nil, nil
	}
	items, err := TakeState(ctx, s.q, h, s.State.StateQueries())
	if err != nil {
		return nil, nil, err
	}
	if err := s.State.StateRows(s.chainID, h, items, state); err != nil {
		return nil, nil, err
	}
	tables := s.State.StateTables()
	names := make([]string, len(tables))
	for i, st := range tables {
		names[i] = st.Name
	}
	if err := store.EnsurePartitions(ctx, s.db, s.chainID, names, h, h); err != nil {
		return nil, nil, err
	}
	return state, tables, nil
}

// backfillBatch bounds the heights one poll of a backfill takes (the next
// poll takes the following ones): a backfill of a long history never holds
// all its due heights at once.
const backfillBatch = 1000

// DueInOrder returns the first limit multiples of every in (last,
// indexed], ascending: none is passed over.
func DueInOrder(last, indexed, every int64, limit int) []int64 {
	if every <= 0 {
		return nil
	}
	var heights []int64
	for h := (max(last, 0)/every + 1) * every; h <= indexed && len(heights) < limit; h += every {
		heights = append(heights, h)
	}
	return heights
}

// Due returns the multiples of every in (last, indexed], ascending. When
// there are more than maxPending of them it returns only the latest, and
// how many it passed over.
func Due(last, indexed, every int64, maxPending int) (heights []int64, passed int64) {
	if every <= 0 || indexed <= last {
		return nil, 0
	}
	first := (max(last, 0)/every + 1) * every
	latest := indexed / every * every
	if latest < first {
		return nil, 0
	}
	n := (latest-first)/every + 1
	if n > int64(maxPending) {
		return []int64{latest}, n - 1
	}
	for h := first; h <= latest; h += every {
		heights = append(heights, h)
	}
	return heights, 0
}
