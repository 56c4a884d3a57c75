package indexer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/store"
)

// rawTables are the raw tables every cosmos height writes.
var rawTables = []chains.Table{
	{Name: "blocks", Columns: []string{"chain_id", "height", "hash", "time", "proposer", "app_hash", "num_txs"}},
	{Name: "txs", Columns: []string{"chain_id", "height", "tx_index", "hash", "code", "codespace", "log", "gas_wanted", "gas_used", "undecodable", "memo", "fee", "fee_payer", "signers"}},
	{Name: "messages", Columns: []string{"chain_id", "height", "tx_index", "msg_index", "type_url", "body", "raw"}},
	{Name: "events", Columns: []string{"chain_id", "height", "tx_index", "event_index", "msg_index", "mode", "type", "attributes"}},
	{Name: "message_addresses", Columns: []string{"chain_id", "height", "tx_index", "msg_index", "address"}},
	{Name: "commit_votes", Columns: []string{"chain_id", "height", "set_hash", "flags"}},
}

// fetched is one height after fetch and decode, or its failure. text
// holds its raw and domain rows as COPY text per writer table, built on the
// fetch workers (so the writer only sends bytes); a height read as a stream
// (see fetchStream) has its rows in spill instead, and block then holds
// only the header fields and Stats.
type fetched struct {
	height int64
	block  *chains.Block
	text   *copyText
	spill  *spill
	events int // tx and block-level events
	err    error
	// onRelease, if set, is called once the spill is released.
	onRelease func()
}

// release removes the height's spill files, if any; it may be called more
// than once.
func (f *fetched) release() {
	if f != nil && f.spill != nil {
		f.spill.remove()
		f.spill = nil
		if f.onRelease != nil {
			f.onRelease()
		}
	}
}

func releaseAll(fs []*fetched) {
	for _, f := range fs {
		f.release()
	}
}

// copyText is a height's rows as COPY text, one entry per writer table.
type copyText struct {
	tables [][]byte
	rows   int
}

// encode renders rows as COPY text in the writer's table order.
func (w *writer) encode(rows *chains.Rows) (*copyText, error) {
	out := &copyText{tables: make([][]byte, len(w.tables))}
	var buf bytes.Buffer
	for i, t := range w.tables {
		rs := rows.Of(t.Name)
		if len(rs) == 0 {
			continue
		}
		buf.Reset()
		for _, r := range rs {
			if err := store.EncodeCopyRow(&buf, t.Columns, r); err != nil {
				return nil, fmt.Errorf("%s: %w", t.Name, err)
			}
		}
		out.tables[i] = bytes.Clone(buf.Bytes())
		out.rows += len(rs)
	}
	return out, nil
}

// writer commits batches of heights of one chain.
type writer struct {
	db      *bun.DB
	chainID string
	kind    string
	tables  []chains.Table // raw then domain

	mu         sync.Mutex
	partitions map[string]bool

	// beforeConn, if set, runs before a batch takes its connection (tests
	// delay a batch with it).
	beforeConn func(from int64)
}

func newWriter(db *bun.DB, chainID, kind string, domain []chains.Table) *writer {
	return &writer{db: db, chainID: chainID, kind: kind, tables: append(append([]chains.Table{}, rawTables...), domain...), partitions: map[string]bool{}}
}

// rawRows appends the raw rows of a decoded height.
func rawRows(b *chains.Block, out *chains.Rows, filter *config.RawFilter) error {
	rawBlockRow(b, len(b.Txs), out)
	return rawPartRows(b, out, filter)
}

// rawBlockRow appends the blocks row of a height with numTxs txs.
func rawBlockRow(b *chains.Block, numTxs int, out *chains.Rows) {
	out.Add("blocks", b.ChainID, b.Height, b.Hash, b.Time, b.Proposer, b.AppHash, numTxs)
	if len(b.Signatures) > 0 {
		// The set itself is written by the batch (writeValidatorSets).
		set, flags := commitVotes(b.Signatures)
		out.Add("commit_votes", b.ChainID, b.Height, set.hash, flags)
	}
}

// rawPartRows appends the txs, messages and events rows of b's txs and
// block-level events (a whole height, or one part of it).
//
// The chain's raw filter drops messages (with their address rows) and
// events it does not keep; txs are always written.
func rawPartRows(b *chains.Block, out *chains.Rows, filter *config.RawFilter) error {
	var keepMsgs, keepEvents func(string) bool
	if !filter.IsZero() {
		keepMsgs, keepEvents = filter.Messages.Keeps, filter.Events.Keeps
	}
	for i := range b.Txs {
		tx := &b.Txs[i]
		fee, err := json.Marshal(nonNil(tx.Fee))
		if err != nil {
			return err
		}
		signers := tx.Signers
		if signers == nil {
			signers = []string{}
		}
		out.Add("txs", b.ChainID, b.Height, tx.Index, tx.Hash, int64(tx.Code), tx.Codespace, tx.Log, tx.GasWanted, tx.GasUsed,
			tx.Undecodable, tx.Memo, json.RawMessage(fee), tx.FeePayer, signers)
		for _, m := range tx.Messages {
			if keepMsgs != nil && !keepMsgs(m.TypeURL) {
				continue
			}
			var raw []byte
			if m.JSON == nil || m.Partial {
				raw = nonNilBytes(m.Raw)
			}
			out.Add("messages", b.ChainID, b.Height, tx.Index, m.Index, m.TypeURL, m.JSON, raw)
			for _, a := range m.Addresses {
				out.Add("message_addresses", b.ChainID, b.Height, tx.Index, m.Index, a)
			}
		}
		for j := range tx.Events {
			if keepEvents != nil && !keepEvents(tx.Events[j].Type) {
				continue
			}
			if err := addEvent(b, &tx.Events[j], out); err != nil {
				return err
			}
		}
	}
	for j := range b.Events {
		if keepEvents != nil && !keepEvents(b.Events[j].Type) {
			continue
		}
		if err := addEvent(b, &b.Events[j], out); err != nil {
			return err
		}
	}
	return nil
}

func addEvent(b *chains.Block, ev *chains.Event, out *chains.Rows) error {
	attrs := ev.Attrs
	if attrs == nil {
		attrs = []chains.Attr{}
	}
	a, err := json.Marshal(attrs)
	if err != nil {
		return err
	}
	out.Add("events", b.ChainID, b.Height, ev.TxIndex, ev.Index, ev.MsgIndex, ev.Mode, ev.Type, json.RawMessage(a))
	return nil
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// ensurePartitions creates missing partitions for [from, to], remembering
// what it created.
func (w *writer) ensurePartitions(ctx context.Context, from, to int64) error {
	if w.partitionsReady(from, to) {
		return nil
	}
	key := fmt.Sprintf("%d-%d", from/store.PartitionSpan, to/store.PartitionSpan)
	names := make([]string, len(w.tables))
	for i, t := range w.tables {
		names[i] = t.Name
	}
	if err := store.EnsurePartitions(ctx, w.db, w.chainID, names, from, to); err != nil {
		return err
	}
	w.mu.Lock()
	w.partitions[key] = true
	w.mu.Unlock()
	return nil
}

// partitionsReady reports whether the partitions of [from, to] are known
// to exist (created by this writer), so that writing them needs no DDL.
func (w *writer) partitionsReady(from, to int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.partitions[fmt.Sprintf("%d-%d", from/store.PartitionSpan, to/store.PartitionSpan)]
}

// commit writes a contiguous batch of heights in one transaction: it
// deletes the heights' rows, copies the new ones (from memory, or from the
// spill files of heights read as a stream), records failed heights
// as dead letters and clears succeeded ones, and, when advance is set,
// moves the checkpoint from batch[0].height to past the last height.
func (w *writer) commit(ctx context.Context, batch []*fetched, advance bool, tip int64) (stats commitStats, err error) {
	return w.commitWith(ctx, batch, advance, tip, nil)
}

// genesisRows is the state at genesis of a chain (see
// chains.GenesisAdapter), written with the batch that starts at the
// chain's initial height.
type genesisRows struct {
	genesis *chains.Genesis
	tables  []chains.Table
	rows    *chains.Rows
	// stateHeight, when set, replaces the genesis: the node's state at
	// that height, staged (stateFor); bank says whether it holds the bank
	// state (the opening balances).
	stateHeight int64
	bank        bool
}

// commitWith is commit that also replaces the chain's rows at
// chains.GenesisHeight by gen's and records the import, in the same
// transaction (gen nil: commit).
func (w *writer) commitWith(ctx context.Context, batch []*fetched, advance bool, tip int64, gen *genesisRows) (commitStats, error) {
	open, err := w.write(ctx, batch, gen, nil)
	if err != nil {
		return commitStats{}, err
	}
	return open.finish(ctx, advance, tip)
}

// openBatch is a batch whose rows are written in a transaction that is
// still open: its checkpoint has not moved and nothing is visible yet.
// Exactly one of finish and abort must follow.
type openBatch struct {
	w        *writer
	conn     *bun.Conn // nil for an empty batch or once finished
	from, to int64
	lastTime *time.Time
	stats    commitStats
}

// write opens a transaction for a contiguous batch of heights and writes
// everything but the checkpoint: it deletes the heights' rows, copies the
// new ones (from memory, or from the spill files of heights read as a
// stream), records failed heights as dead letters and clears succeeded
// ones, and writes gen's rows if set. Batches of different heights may be
// written concurrently on their own connections; finish orders them.
// opened, if set, is called once the transaction is open: from then on
// write takes no further connection from the pool.
func (w *writer) write(ctx context.Context, batch []*fetched, gen *genesisRows, opened func()) (_ *openBatch, err error) {
	if len(batch) == 0 {
		return &openBatch{w: w}, nil
	}
	from, to := batch[0].height, batch[len(batch)-1].height
	ob := &openBatch{w: w, from: from, to: to}
	var ok []int64
	var failed []*fetched
	var spilled []*spill
	var texts []*copyText
	for _, f := range batch {
		if f.err != nil {
			failed = append(failed, f)
			continue
		}
		if f.spill != nil {
			spilled = append(spilled, f.spill)
		} else if f.text != nil {
			texts = append(texts, f.text)
		}
		ok = append(ok, f.height)
		t := f.block.Time
		ob.lastTime = &t
		ob.stats.events += f.events
	}
	ob.stats.blocks = len(ok)
	ob.stats.failed = len(failed)
	if err := w.ensurePartitions(ctx, from, to); err != nil {
		return nil, err
	}
	if gen != nil {
		if err := w.ensurePartitions(ctx, chains.GenesisHeight, chains.GenesisHeight); err != nil {
			return nil, err
		}
	}

	var blocks []*chains.Block
	for _, f := range batch {
		if f.err == nil && f.block != nil {
			blocks = append(blocks, f.block)
		}
	}
	if err := writeValidatorSets(ctx, w.db, w.chainID, blocks); err != nil {
		return nil, fmt.Errorf("commit %d..%d: %w", from, to, err)
	}

	if w.beforeConn != nil {
		w.beforeConn(from)
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("commit %d..%d: %w", from, to, err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		conn.Close()
		return nil, fmt.Errorf("commit %d..%d: begin: %w", from, to, err)
	}
	ob.conn = &conn
	if opened != nil {
		opened()
	}
	defer func() {
		if err != nil {
			ob.abort()
		}
	}()
	// Clear the heights' old rows and dead letters in one round trip, unless
	// nothing was ever written at or above from (the forward path).
	var highWater int64
	if err := conn.NewRaw("SELECT coalesce((SELECT high_water FROM sync_state WHERE chain_id = ?), 0)", w.chainID).Scan(ctx, &highWater); err != nil {
		return nil, fmt.Errorf("commit %d..%d: high water: %w", from, to, err)
	}
	var clear strings.Builder
	if from <= highWater {
		for _, t := range w.tables {
			fmt.Fprintf(&clear, "DELETE FROM %s WHERE chain_id = %s AND height BETWEEN %d AND %d;\n", t.Name, quote(w.chainID), from, to)
		}
	}
	if len(ok) > 0 {
		hs := make([]string, len(ok))
		for i, h := range ok {
			hs[i] = strconv.FormatInt(h, 10)
		}
		fmt.Fprintf(&clear, "DELETE FROM dead_letters WHERE chain_id = %s AND height IN (%s);\n", quote(w.chainID), strings.Join(hs, ","))
	}
	if clear.Len() > 0 {
		if _, err := conn.ExecContext(ctx, clear.String()); err != nil {
			return nil, fmt.Errorf("commit %d..%d: clear old rows: %w", from, to, err)
		}
	}
	for i, t := range w.tables {
		var parts [][]byte
		for _, tx := range texts {
			if len(tx.tables[i]) > 0 {
				parts = append(parts, tx.tables[i])
			}
		}
		if len(parts) > 0 {
			n, err := store.CopyChunks(ctx, conn, t.Name, t.Columns, parts)
			if err != nil {
				return nil, fmt.Errorf("commit %d..%d: %w", from, to, err)
			}
			ob.stats.rows += n
		}
		// Spilled heights: their COPY text streams from its files, in
		// chunks, within the same transaction.
		for _, sp := range spilled {
			n, err := sp.copyTable(ctx, conn, t)
			if err != nil {
				return nil, fmt.Errorf("commit %d..%d: %w", from, to, err)
			}
			ob.stats.rows += n
		}
	}
	if gen != nil && gen.stateHeight > 0 {
		// The opening balances hold before the first height; a first height
		// that failed is a dead letter, indexed on its retry. Their time is
		// that of the first block committed with them.
		first := -1
		for i, f := range batch {
			if f.block != nil && slices.Contains(ok, f.height) {
				first = i
				break
			}
		}
		if first < 0 {
			return nil, fmt.Errorf("commit %d..%d: the state import needs a committed block for its time, and every height failed", from, to)
		}
		n, err := writeStateImport(ctx, conn, w.chainID, gen.stateHeight, batch[first].block.Time, gen.bank)
		if err != nil {
			return nil, fmt.Errorf("commit %d..%d: state import: %w", from, to, err)
		}
		ob.stats.rows += n
	} else if gen != nil {
		n, err := w.writeGenesis(ctx, conn, gen)
		if err != nil {
			return nil, fmt.Errorf("commit %d..%d: genesis: %w", from, to, err)
		}
		ob.stats.rows += n
	}
	for _, f := range failed {
		if _, err := conn.ExecContext(ctx, `INSERT INTO dead_letters (chain_id, height, attempts, last_error, next_retry_at)
			VALUES (?, ?, 1, ?, now() + interval '30 seconds')
			ON CONFLICT (chain_id, height) DO UPDATE SET attempts = dead_letters.attempts + 1, last_error = EXCLUDED.last_error,
			last_failed_at = now(), next_retry_at = now() + make_interval(secs => least(3600, 30 * power(2, least(dead_letters.attempts, 7))))`,
			w.chainID, f.height, truncate(f.err.Error(), 4000)); err != nil {
			return nil, fmt.Errorf("commit %d..%d: dead letter %d: %w", from, to, f.height, err)
		}
	}
	return ob, nil
}

// finish moves the checkpoint from the batch's first height to past its
// last (when advance is set) and commits. The checkpoint moves only if it
// stands at the batch's first height, so a batch written ahead of the one
// before it can only commit after that one (ErrCheckpointMoved otherwise).
func (ob *openBatch) finish(ctx context.Context, advance bool, tip int64) (commitStats, error) {
	if ob.conn == nil {
		return ob.stats, nil
	}
	defer ob.abort()
	w, conn, from, to := ob.w, ob.conn, ob.from, ob.to
	if advance {
		if err := AdvanceCheckpoint(ctx, conn, Advance{ChainID: w.chainID, Kind: w.kind, From: from, To: to, LastTime: ob.lastTime, Tip: tip}); err != nil {
			return commitStats{}, err
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return commitStats{}, fmt.Errorf("commit %d..%d: %w", from, to, err)
	}
	conn.Close()
	ob.conn = nil
	return ob.stats, nil
}

// abort rolls the batch's transaction back, if still open, and returns
// its connection; it may be called more than once.
func (ob *openBatch) abort() {
	if ob.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = ob.conn.ExecContext(ctx, "ROLLBACK")
	ob.conn.Close()
	ob.conn = nil
}

type commitStats struct {
	blocks, failed, events int
	rows                   int64
}

// countEvents counts the tx and block-level events of a decoded height.
func countEvents(b *chains.Block) int {
	n := len(b.Events)
	for i := range b.Txs {
		n += len(b.Txs[i].Events)
	}
	return n
}

// quote renders a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// writeGenesis replaces the chain's rows at chains.GenesisHeight in gen's
// tables by gen's rows and records the import (idempotent: a second import
// leaves the same rows).
func (w *writer) writeGenesis(ctx context.Context, conn bun.Conn, gen *genesisRows) (int64, error) {
	var total int64
	for _, t := range gen.tables {
		if _, err := conn.ExecContext(ctx, "DELETE FROM "+t.Name+" WHERE chain_id = ? AND height = ?", w.chainID, chains.GenesisHeight); err != nil {
			return 0, fmt.Errorf("clear %s: %w", t.Name, err)
		}
		n, err := store.CopyRows(ctx, conn, t.Name, t.Columns, gen.rows.Of(t.Name))
		if err != nil {
			return 0, err
		}
		total += n
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO genesis_imports (chain_id, initial_height, genesis_time, balance_rows, imported_at)
		VALUES (?, ?, ?, ?, now())
		ON CONFLICT (chain_id) DO UPDATE SET initial_height = EXCLUDED.initial_height, genesis_time = EXCLUDED.genesis_time,
		balance_rows = EXCLUDED.balance_rows, imported_at = now()`,
		w.chainID, gen.genesis.InitialHeight, gen.genesis.Time, total); err != nil {
		return 0, fmt.Errorf("record import: %w", err)
	}
	return total, nil
}
