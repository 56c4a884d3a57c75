package evm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/store"
)

// Tables and columns the indexer writes; both are partitioned by height.
var (
	blockColumns    = []string{"chain_id", "height", "hash", "parent_hash", "time"}
	transferColumns = []string{"chain_id", "height", "tx_hash", "log_index", "token", "sender", "recipient", "amount", "kind"}
	bridgeColumns   = []string{"chain_id", "height", "tx_hash", "log_index", "protocol", "direction", "remote_domain", "token", "account", "amount"}
	tableNames      = []string{"evm_blocks", "erc20_transfers", "evm_bridge_transfers"}
)

// ensurePartitions creates missing partitions for [from, to], remembering
// what exists.
func (x *Indexer) ensurePartitions(ctx context.Context, from, to int64) error {
	lo, hi := from/store.PartitionSpan, to/store.PartitionSpan
	x.mu.Lock()
	done := true
	for p := lo; p <= hi; p++ {
		done = done && x.partitions[p]
	}
	x.mu.Unlock()
	if done {
		return nil
	}
	if err := store.EnsurePartitions(ctx, x.db, x.cfg.ID, tableNames, from, to); err != nil {
		return err
	}
	x.mu.Lock()
	for p := lo; p <= hi; p++ {
		x.partitions[p] = true
	}
	x.mu.Unlock()
	return nil
}

// commit writes a fetched range in one transaction: it deletes the range's
// rows, copies the headers and movements, records the failed blocks as
// dead letters and clears the others' and, when advance is set, moves the
// checkpoint from d.from to d.to+1 (only if it still is at d.from).
func (x *Indexer) commit(ctx context.Context, d *rangeData, advance bool, tip int64) error {
	var blocks, moves [][]any
	var lastTime *time.Time
	for i, h := range d.headers {
		if h == nil {
			continue
		}
		blocks = append(blocks, []any{x.cfg.ID, d.from + int64(i), h.Hash.Hex(), h.ParentHash.Hex(), h.time()})
		t := h.time()
		lastTime = &t
	}
	for _, m := range d.moves {
		moves = append(moves, []any{x.cfg.ID, m.Height, m.TxHash, m.LogIndex, m.Token, m.From, m.To, m.Amount, m.Kind})
	}
	var flows [][]any
	for _, f := range d.flows {
		flows = append(flows, []any{x.cfg.ID, f.Height, f.TxHash, f.LogIndex, "cctp", f.Direction, f.Domain, f.Token, f.Account, f.Amount})
	}
	if err := x.ensurePartitions(ctx, d.from, d.to); err != nil {
		return err
	}
	conn, err := x.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("commit %d..%d: %w", d.from, d.to, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("commit %d..%d: begin: %w", d.from, d.to, err)
	}
	committed := false
	defer func() {
		if !committed {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	for _, t := range []struct {
		name string
		cols []string
		rows [][]any
	}{{"evm_blocks", blockColumns, blocks}, {"erc20_transfers", transferColumns, moves},
		{"evm_bridge_transfers", bridgeColumns, flows}} {
		if _, err := conn.ExecContext(ctx, "DELETE FROM "+t.name+" WHERE chain_id = ? AND height BETWEEN ? AND ?", x.cfg.ID, d.from, d.to); err != nil {
			return fmt.Errorf("commit %d..%d: clear %s: %w", d.from, d.to, t.name, err)
		}
		if _, err := store.CopyRows(ctx, conn, t.name, t.cols, t.rows); err != nil {
			return fmt.Errorf("commit %d..%d: %w", d.from, d.to, err)
		}
	}
	failed := make([]int64, 0, len(d.failed))
	for h := range d.failed {
		failed = append(failed, h)
	}
	q := "DELETE FROM dead_letters WHERE chain_id = ? AND height BETWEEN ? AND ?"
	args := []any{x.cfg.ID, d.from, d.to}
	if len(failed) > 0 {
		q += " AND height NOT IN (?)"
		args = append(args, bun.List(failed))
	}
	if _, err := conn.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("commit %d..%d: clear dead letters: %w", d.from, d.to, err)
	}
	for h, ferr := range d.failed {
		if err := deadLetter(ctx, conn, x.cfg.ID, h, ferr); err != nil {
			return fmt.Errorf("commit %d..%d: %w", d.from, d.to, err)
		}
	}
	if advance {
		if err := indexer.AdvanceCheckpoint(ctx, conn, indexer.Advance{ChainID: x.cfg.ID, Kind: x.cfg.Kind, From: d.from, To: d.to, LastTime: lastTime, Tip: tip}); err != nil {
			return err
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("commit %d..%d: %w", d.from, d.to, err)
	}
	committed = true
	return nil
}

// deadLetter records (or counts another attempt of) a failing block.
func deadLetter(ctx context.Context, db bun.IConn, chainID string, height int64, cause error) error {
	msg := cause.Error()
	if len(msg) > 4000 {
		msg = msg[:4000]
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO dead_letters (chain_id, height, attempts, last_error, next_retry_at)
		VALUES (?, ?, 1, ?, now() + interval '30 seconds')
		ON CONFLICT (chain_id, height) DO UPDATE SET attempts = dead_letters.attempts + 1, last_error = EXCLUDED.last_error,
		last_failed_at = now(), next_retry_at = now() + make_interval(secs => least(3600, 30 * power(2, least(dead_letters.attempts, 7))))`,
		chainID, height, msg); err != nil {
		return fmt.Errorf("dead letter %d: %w", height, err)
	}
	return nil
}

// storedHash is the stored hash of the block at height, if any.
func (x *Indexer) storedHash(ctx context.Context, height int64) (common.Hash, bool, error) {
	var s string
	err := x.db.NewRaw("SELECT hash FROM evm_blocks WHERE chain_id = ? AND height = ?", x.cfg.ID, height).Scan(ctx, &s)
	if errors.Is(err, sql.ErrNoRows) {
		return common.Hash{}, false, nil
	}
	if err != nil {
		return common.Hash{}, false, fmt.Errorf("indexer %s: stored block %d: %w", x.cfg.ID, height, err)
	}
	return common.HexToHash(s), true, nil
}

// storedParent is the stored parent hash of the block at height, if any.
func (x *Indexer) storedParent(ctx context.Context, height int64) (common.Hash, bool, error) {
	var s string
	err := x.db.NewRaw("SELECT parent_hash FROM evm_blocks WHERE chain_id = ? AND height = ?", x.cfg.ID, height).Scan(ctx, &s)
	if errors.Is(err, sql.ErrNoRows) {
		return common.Hash{}, false, nil
	}
	if err != nil {
		return common.Hash{}, false, fmt.Errorf("indexer %s: stored block %d: %w", x.cfg.ID, height, err)
	}
	return common.HexToHash(s), true, nil
}

// findAncestor walks the stored blocks down from hi, in windows that
// double, comparing each with the node's block at the same height, and
// returns the highest height where both agree. When none does, it returns
// the height below the lowest stored block (everything is reindexed).
func (x *Indexer) findAncestor(ctx context.Context, hi int64) (int64, error) {
	var lowest sql.NullInt64
	if err := x.db.NewRaw("SELECT min(height) FROM evm_blocks WHERE chain_id = ?", x.cfg.ID).Scan(ctx, &lowest); err != nil {
		return 0, fmt.Errorf("indexer %s: lowest stored block: %w", x.cfg.ID, err)
	}
	if !lowest.Valid {
		return hi, nil
	}
	step := int64(32)
	for hi >= lowest.Int64 {
		lo := max(lowest.Int64, hi-step+1)
		var stored []struct {
			Height int64  `bun:"height"`
			Hash   string `bun:"hash"`
		}
		if err := x.db.NewRaw("SELECT height, hash FROM evm_blocks WHERE chain_id = ? AND height BETWEEN ? AND ? ORDER BY height DESC",
			x.cfg.ID, lo, hi).Scan(ctx, &stored); err != nil {
			return 0, fmt.Errorf("indexer %s: stored blocks %d..%d: %w", x.cfg.ID, lo, hi, err)
		}
		canon, err := x.headers(ctx, lo, hi, true)
		if err != nil {
			return 0, err
		}
		for _, s := range stored {
			if c := canon[s.Height-lo]; c != nil && c.Hash == common.HexToHash(s.Hash) {
				return s.Height, nil
			}
		}
		hi = lo - 1
		step = min(step*2, 4096)
	}
	return lowest.Int64 - 1, nil
}

// rewind deletes every row above ancestor and moves the checkpoint back
// from next to ancestor+1, in one transaction.
func (x *Indexer) rewind(ctx context.Context, ancestor, next int64) error {
	return x.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, t := range []string{"erc20_transfers", "evm_bridge_transfers", "evm_blocks", "dead_letters"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE chain_id = ? AND height > ?", x.cfg.ID, ancestor); err != nil {
				return fmt.Errorf("rewind to %d: clear %s: %w", ancestor, t, err)
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE sync_state SET next_height = ?,
			last_time = (SELECT time FROM evm_blocks WHERE chain_id = ? AND height = ?), updated_at = now()
			WHERE chain_id = ? AND next_height = ?`, ancestor+1, x.cfg.ID, ancestor, x.cfg.ID, next)
		if err != nil {
			return fmt.Errorf("rewind to %d: checkpoint: %w", ancestor, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("rewind to %d: %w", ancestor, indexer.ErrCheckpointMoved)
		}
		return nil
	})
}

// retryDeadLetters fetches dead-lettered blocks again (due ones only, or
// all), one block per transaction; the checkpoint does not move. A block
// is written only if it still fits the stored chain around it; otherwise a
// reorg is under way and the rewind will reindex it.
func (x *Indexer) retryDeadLetters(ctx context.Context, dueOnly bool, tip int64) error {
	dls, err := deadLetters(ctx, x, dueOnly)
	if err != nil {
		return err
	}
	defer indexer.RefreshDeadLetterGauges(ctx, x.db, x.cfg.ID, x.series)
	for _, h := range dls {
		d, err := x.fetchOnce(ctx, h, h)
		if err == nil {
			err = x.fitsStoredChain(ctx, d.headers[0], h)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !errors.Is(err, errPermanent) {
				return err // the node is unavailable, or the database failed
			}
			conn, cerr := x.db.Conn(ctx)
			if cerr != nil {
				return cerr
			}
			err = deadLetter(ctx, conn, x.cfg.ID, h, err)
			conn.Close()
			if err != nil {
				return err
			}
			continue
		}
		if err := x.commit(ctx, d, false, tip); err != nil {
			return err
		}
		x.log.Info("dead letter indexed", "height", h)
	}
	return nil
}

func deadLetters(ctx context.Context, x *Indexer, dueOnly bool) ([]int64, error) {
	q := "SELECT height FROM dead_letters WHERE chain_id = ?"
	if dueOnly {
		q += " AND next_retry_at <= now()"
	}
	var hs []int64
	if err := x.db.NewRaw(q+" ORDER BY height", x.cfg.ID).Scan(ctx, &hs); err != nil {
		return nil, fmt.Errorf("dead letters of %s: %w", x.cfg.ID, err)
	}
	return hs, nil
}

// fitsStoredChain checks a refetched block against the stored blocks: its
// own stored header if any, else the stored neighbours' hashes.
func (x *Indexer) fitsStoredChain(ctx context.Context, h *header, height int64) error {
	if s, ok, err := x.storedHash(ctx, height); err != nil {
		return err
	} else if ok {
		if s != h.Hash {
			return fmt.Errorf("%w: block %d is now %s, stored %s; waiting for the reorg rewind", errPermanent, height, h.Hash.Hex(), s.Hex())
		}
		return nil
	}
	if p, ok, err := x.storedHash(ctx, height-1); err != nil {
		return err
	} else if ok && p != h.ParentHash {
		return fmt.Errorf("%w: block %d does not descend from the stored block %d; waiting for the reorg rewind", errPermanent, height, height-1)
	}
	if c, ok, err := x.storedParent(ctx, height+1); err != nil {
		return err
	} else if ok && c != h.Hash {
		return fmt.Errorf("%w: the stored block %d does not descend from block %d; waiting for the reorg rewind", errPermanent, height+1, height)
	}
	return nil
}
