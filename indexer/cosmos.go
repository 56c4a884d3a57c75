package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer/cometbft"
)

// Source fetches heights of a CometBFT chain; NewClientSource adapts a
// *cometbft.Client.
type Source interface {
	Status(ctx context.Context) (cometbft.Status, error)
	Block(ctx context.Context, height int64) ([]byte, error)
	// BlockResults returns the result of /block_results at height: whole
	// when the answer is at most inMemoryMax bytes, else as a stream (the
	// rule of cometbft.Client.CallAnswer).
	BlockResults(ctx context.Context, height, inMemoryMax int64) (cometbft.Answer, error)
}

// clientSource adapts *cometbft.Client to Source.
type clientSource struct{ c *cometbft.Client }

func (s clientSource) Status(ctx context.Context) (cometbft.Status, error) { return s.c.Status(ctx) }
func (s clientSource) Block(ctx context.Context, h int64) ([]byte, error)  { return s.c.Block(ctx, h) }
func (s clientSource) BlockResults(ctx context.Context, h, inMemoryMax int64) (cometbft.Answer, error) {
	return s.c.BlockResultsAnswer(ctx, h, inMemoryMax)
}

func (s clientSource) Genesis(ctx context.Context) ([]byte, error) { return s.c.Genesis(ctx) }

// GenesisSource is a Source that also serves the chain's genesis document
// (CometBFT /genesis): with a chains.GenesisAdapter, a chain indexed from
// its initial height gets its state at genesis (see genesisFor).
type GenesisSource interface {
	Genesis(ctx context.Context) ([]byte, error)
}

// NewClientSource wraps a CometBFT client as a Source.
func NewClientSource(c *cometbft.Client) Source { return clientSource{c} }

// Cosmos indexes one CometBFT chain.
type Cosmos struct {
	cfg     config.Chain
	db      *bun.DB
	src     Source
	adapter chains.Adapter
	log     *slog.Logger
	series  ChainSeries
	w       *writer
	// lane admits the heights read as a stream.
	lane *streamLane
	// RetryEvery is how often due dead letters are retried.
	RetryEvery time.Duration
	// descriptorsLoaded: the adapter has the node's stored descriptors.
	descriptorsLoaded bool
	// validatorSets tracks whether the node serves validator sets.
	validatorSets validatorSetState
	// versionChecked is when checkNodeVersion last asked the node.
	versionChecked time.Time
	// genesisSettled is set once this Run knows that no genesis is to be
	// imported with a later batch (imported, or not at the initial height).
	genesisSettled bool
	// fresh: this Run started with nothing indexed (no checkpoint), so a
	// start after the initial height imports the state before it.
	fresh bool
	// State, when set, reads the node's bank state at the height before
	// the first indexed one for a chain not indexed from its initial
	// height (the genesis does not apply): the opening balances.
	State BankState
	// GiveUpAfter, when positive, ends Run with an error once the node has
	// answered no status for that long (index --until: an unreachable node
	// fails the command instead of being waited for ever).
	GiveUpAfter time.Duration
	// SessionDB, when set, holds the chain's indexing lock for the run: a
	// direct connection when the database is reached through a pooler in
	// transaction mode, which cannot keep a session lock (database.session_url).
	SessionDB *bun.DB
	// StreamAbove is the /block_results answer size above which a height
	// is read as a stream, its rows spilled to temporary files and
	// committed as a batch of its own, one such height at a time (when the
	// adapter is a chains.StreamAdapter; see fetchStream). Default
	// cometbft.StreamAbove; zero or less reads every height whole.
	StreamAbove int64
}

// NewCosmos returns the indexer of one cosmos chain.
func NewCosmos(cfg config.Chain, db *bun.DB, src Source, adapter chains.Adapter, log *slog.Logger, m *Metrics) *Cosmos {
	return &Cosmos{
		cfg: cfg, db: db, src: src, adapter: adapter, log: log.With("chain", cfg.ID), series: m.Chain(cfg.ID),
		w: newWriter(db, cfg.ID, cfg.Kind, adapter.Tables()), lane: newStreamLane(),
		RetryEvery: 30 * time.Second, StreamAbove: cometbft.StreamAbove,
	}
}

// ChainID is the id of the indexed chain.
func (x *Cosmos) ChainID() string { return x.cfg.ID }

// Run follows the chain until ctx ends. With until > 0 it returns nil once
// every height through until is committed (and no dead letter at or below
// it remains), or an error naming the heights that still fail.
func (x *Cosmos) Run(ctx context.Context, until int64) error {
	if err := x.useNodeDescriptors(ctx); err != nil {
		return err
	}
	var wake <-chan struct{}
	if x.cfg.NewBlockHint && len(x.cfg.RPC) > 0 {
		wake = blockHint(ctx, x.cfg.RPC[0], x.log)
	}
	return Follow{DB: x.db, Chain: x.cfg, Blocks: "blocks", Series: x.series, Log: x.log,
		LockDB: x.SessionDB, RetryEvery: x.RetryEvery, GiveUpAfter: x.GiveUpAfter, Wake: wake}.Run(ctx, &cosmosFamily{x: x}, until)
}

// cosmosFamily is a CometBFT chain as Follow reads it.
type cosmosFamily struct {
	x *Cosmos
	// resumed: heights were indexed before (see LoadStart), so a height
	// the node has pruned cannot be skipped without leaving a gap.
	resumed bool
}

// Start is the checkpoint, else start_height, else the node's earliest
// height, once the last indexed block is the node's.
func (f *cosmosFamily) Start(ctx context.Context) (int64, error) {
	x := f.x
	next, resumed, err := x.startHeight(ctx)
	if err != nil {
		return 0, err
	}
	f.resumed = resumed
	x.fresh = !resumed
	x.genesisSettled = false // the chain may have been reset since the last Run
	return next, x.checkContinuity(ctx, next)
}

// Tip is the node's status. A node of another network, or RPC endpoints
// of several, end the run.
func (f *cosmosFamily) Tip(ctx context.Context) (Tip, error) {
	x := f.x
	st, err := x.src.Status(ctx)
	if errors.Is(err, cometbft.ErrMixedChains) {
		return Tip{}, fmt.Errorf("indexer %s: %w", x.cfg.ID, err)
	}
	if err != nil {
		return Tip{}, fmt.Errorf("%w: %w", ErrNodeUnavailable, err)
	}
	if st.Network != "" && st.Network != x.cfg.ID {
		return Tip{}, fmt.Errorf("indexer %s: the node serves chain %q, not %q", x.cfg.ID, st.Network, x.cfg.ID)
	}
	return Tip{Latest: st.LatestHeight, Target: st.LatestHeight, Status: st}, nil
}

// CatchUp indexes [next, target]. A first start below the node's earliest
// height skips to it when allow_pruned_start says so.
func (f *cosmosFamily) CatchUp(ctx context.Context, next, target int64, tip Tip) (int64, error) {
	x := f.x
	st := tip.Status.(cometbft.Status)
	if next < st.EarliestHeight {
		if f.resumed {
			// Skipping now would leave a gap that nothing records.
			return next, fmt.Errorf("indexer %s: height %d, the next to index, is pruned on the node (earliest available: %d); "+
				"allow_pruned_start applies only to a chain's first start: point rpc at a node that still has it", x.cfg.ID, next, st.EarliestHeight)
		}
		if !x.cfg.AllowPrunedStart {
			return next, fmt.Errorf("indexer %s: height %d is pruned on the node (earliest available: %d); set allow_pruned_start or start_height", x.cfg.ID, next, st.EarliestHeight)
		}
		x.log.Warn("starting at the node's earliest height", "wanted", next, "earliest", st.EarliestHeight)
		if err := x.skipTo(ctx, next, st.EarliestHeight, st.LatestHeight); err != nil {
			return next, err
		}
		next = st.EarliestHeight
		if next > target {
			return next, nil
		}
	}
	n, err := x.catchUp(ctx, next, target, st)
	f.resumed = f.resumed || n > next
	return n, err
}

// RetryDeadLetters retries the chain's dead letters.
func (f *cosmosFamily) RetryDeadLetters(ctx context.Context, tip Tip, dueOnly bool) error {
	return f.x.retryDeadLetters(ctx, tip.Status.(cometbft.Status), dueOnly)
}

// AtTip has nothing to check: a committed CometBFT block is final.
func (f *cosmosFamily) AtTip(_ context.Context, next int64) (int64, error) { return next, nil }

// ErrDifferentHistory means the node's block at the last indexed height is
// not the indexed one: the chain was reset (a devnet) or the RPC points at
// another network with the same chain id.
var ErrDifferentHistory = errors.New("the node serves a different chain history than the one indexed")

// checkContinuity compares the last indexed block with the node's block at
// the same height, waiting while the node has not reached it yet.
func (x *Cosmos) checkContinuity(ctx context.Context, next int64) error {
	if next <= 1 {
		return nil
	}
	var stored string
	err := x.db.NewRaw("SELECT hash FROM blocks WHERE chain_id = ? AND height = ?", x.cfg.ID, next-1).Scan(ctx, &stored)
	if err != nil {
		return nil // not stored (a dead letter or a pruned start): nothing to compare
	}
	start := time.Now()
	for warned := false; ; warned = true {
		raw, err := x.src.Block(ctx, next-1)
		var he *cometbft.HeightError
		if errors.As(err, &he) && he.TooHigh {
			if x.GiveUpAfter > 0 && time.Since(start) >= x.GiveUpAfter {
				return fmt.Errorf("indexer %s: the node stayed behind the indexed height %d for %s (its tip: %d)", x.cfg.ID, next-1, x.GiveUpAfter, he.Bound)
			}
			if !warned {
				x.log.Warn("node is behind the indexed height; waiting", "indexed", next-1, "node", he.Bound)
			}
			if Sleep(ctx, x.cfg.PollInterval.D()) != nil {
				return nil
			}
			continue
		}
		if err != nil {
			return nil // transport trouble: the main loop retries and reports it
		}
		var b struct {
			BlockID struct {
				Hash string `json:"hash"`
			} `json:"block_id"`
		}
		if err := json.Unmarshal(raw, &b); err != nil || b.BlockID.Hash == stored {
			return nil
		}
		return fmt.Errorf("indexer %s: height %d has hash %s on the node but %s in the database: %w; "+
			"to start over run `chainlens index --reset --chain %s`", x.cfg.ID, next-1, b.BlockID.Hash, stored, ErrDifferentHistory, x.cfg.ID)
	}
}

// startHeight is the checkpoint, or the configured start for a new chain
// (else the node's earliest height); resumed as LoadStart says.
func (x *Cosmos) startHeight(ctx context.Context) (next int64, resumed bool, err error) {
	st, err := LoadStart(ctx, x.db, x.cfg, "blocks", x.series)
	if err != nil || !st.Fresh {
		return st.Next, st.Resumed, err
	}
	if x.cfg.StartHeight > 0 {
		return x.cfg.StartHeight, false, nil
	}
	status, err := x.src.Status(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("indexer %s: %w", x.cfg.ID, err)
	}
	return status.EarliestHeight, false, nil
}

// skipTo records a checkpoint jump over pruned heights.
func (x *Cosmos) skipTo(ctx context.Context, from, to, tip int64) error {
	return AdvanceCheckpoint(ctx, x.db, Advance{ChainID: x.cfg.ID, Kind: x.cfg.Kind, From: from, To: to - 1, Tip: tip, Skip: true})
}

// catchUp indexes [next, target]: a dispatcher hands heights to
// Concurrency fetchers, at most a window ahead of the commit point, and
// the writer commits contiguous runs of up to BatchSize heights in order
// (a height read as a stream alone). It returns the new next height.
func (x *Cosmos) catchUp(ctx context.Context, next, target int64, st cometbft.Status) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := x.cfg.Concurrency
	// A batch's worth of heights more than those being committed may be
	// fetched or wait: the workers decode the next batch while the writer
	// commits (with no room, decoding and committing took turns).
	window := int64(workers*2 + (commitsInFlight+1)*x.cfg.BatchSize)
	heights := make(chan int64)
	results := make(chan *fetched, window) // never full: credits bound the heights out
	credits := make(chan struct{}, window) // bounds heights in flight or waiting to commit
	pending := map[int64]*fetched{}
	// Runs last, once the workers are done: heights never committed give
	// back their spill files.
	defer func() {
		for _, f := range pending {
			f.release()
		}
		for {
			select {
			case f := <-results:
				f.release()
			default:
				return
			}
		}
	}()
	gen, err := x.genesisFor(ctx, next, st)
	if err != nil {
		return next, err
	}
	enc := chains.AttrAuto
	if st.Base64Attributes() {
		enc = chains.AttrBase64
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range heights {
				f := x.fetch(ctx, h, enc, true)
				select {
				case results <- f:
				case <-ctx.Done():
					f.release()
					return
				}
			}
		}()
	}
	go func() {
		defer close(heights)
		for h := next; h <= target; h++ {
			select {
			case credits <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case heights <- h:
			case <-ctx.Done():
				return
			}
		}
	}()
	// Up to commitsInFlight batches are written at once, each in its own
	// transaction on its own connection (Postgres copies them on separate
	// cores); each commits only after the one before it did (see
	// startCommit), so the checkpoint still moves in height order. On
	// return, batches still in flight are cancelled and waited for.
	var inflight []*batchCommit
	defer func() {
		for _, c := range inflight {
			<-c.done
		}
	}()
	defer wg.Wait()
	defer cancel()

	formed := next // the first height not yet in a batch
	// The lowest height the node could not be reached for (its retries
	// spent), and why: the heights below it are committed, none at or
	// above it (no dead letters for an outage), and the run loop retries
	// from there (see Follow).
	var unreachable int64
	var unreachableErr error
	for next <= target {
		if unreachableErr != nil && len(inflight) == 0 && formed >= unreachable {
			return next, unreachableErr
		}
		var head <-chan struct{}
		if len(inflight) > 0 {
			head = inflight[0].done
		}
		select {
		case f := <-results:
			if errors.Is(f.err, errFatal) {
				return next, f.err
			}
			if errors.Is(f.err, ErrNodeUnavailable) {
				// Kept out of the batches; those below it still form.
				if unreachableErr == nil || f.height < unreachable {
					unreachable, unreachableErr = f.height, f.err
				}
				f.release()
			} else {
				pending[f.height] = f
			}
		case <-head:
			c := inflight[0]
			inflight = inflight[1:]
			if c.err != nil {
				return next, fmt.Errorf("indexer %s: %w", x.cfg.ID, c.err)
			}
			next = x.committed(ctx, c, credits, st)
			if c.genRows > 0 {
				x.log.Info("genesis state imported", "rows", c.genRows)
			}
			if c.stateHeight > 0 {
				x.log.Info("bank state before the first indexed height imported", "height", c.stateHeight)
			}
			if c.gen {
				x.genesisSettled = true
			}
		case <-ctx.Done():
			return next, ctx.Err()
		}
		// Start every batch that is ready: several may be after one result.
		for len(inflight) < commitsInFlight {
			upTo := target
			if unreachableErr != nil {
				upTo = unreachable - 1 // the last batch before the unreachable height may be short
			}
			batch := readyBatch(pending, formed, upTo, x.cfg.BatchSize, int(window))
			if batch != nil && batch[0].height > upTo {
				batch = nil
			}
			if batch == nil {
				break
			}
			for _, g := range batch {
				delete(pending, g.height)
			}
			formed = batch[len(batch)-1].height + 1
			var prev *batchCommit
			if len(inflight) > 0 {
				prev = inflight[len(inflight)-1]
			}
			inflight = append(inflight, x.startCommit(ctx, prev, batch, gen, st.LatestHeight))
			gen = nil // written with the first batch
		}
	}
	return next, nil
}

// commitsInFlight bounds the batches written concurrently by the catch-up.
const commitsInFlight = 2

// batchCommit is a batch being written and committed in the background.
type batchCommit struct {
	batch []*fetched
	// opened is closed once the batch's transaction is open (or its write
	// gave up): it takes no more connections from the pool.
	opened  chan struct{}
	gen     bool // the batch carries the genesis state
	genRows int
	// stateHeight is that of the state imported with the batch (0: none).
	stateHeight int64
	done        chan struct{}
	stats       commitStats
	err         error
}

// errEarlierBatchFailed means a batch was rolled back because the batch
// before it did not commit.
var errEarlierBatchFailed = errors.New("an earlier batch did not commit")

// startCommit writes batch in its own transaction in the background and
// commits it once prev (if any) has committed; if prev fails, batch is
// rolled back. It starts writing only once prev's transaction is open, so
// two batches never wait on each other for pool connections (the chain
// lock's connection plus two are enough). The batch's spill files are
// released when it is done.
func (x *Cosmos) startCommit(ctx context.Context, prev *batchCommit, batch []*fetched, gen *genesisRows, tip int64) *batchCommit {
	c := &batchCommit{batch: batch, opened: make(chan struct{}), done: make(chan struct{})}
	if gen != nil {
		c.gen, c.stateHeight = true, gen.stateHeight
		if gen.rows != nil {
			c.genRows = gen.rows.Len()
		}
	}
	var once sync.Once
	markOpened := func() { once.Do(func() { close(c.opened) }) }
	go func() {
		defer close(c.done)
		defer releaseAll(batch)
		defer markOpened()
		if prev != nil {
			// Take no pooled connection while the batch before may still
			// need one (with a small pool, each would wait for the other),
			// and create no partition while its transaction is open (the
			// DDL would wait for it, and readers of the table behind it).
			<-prev.opened
			if from, to := batch[0].height, batch[len(batch)-1].height; !x.w.partitionsReady(from, to) {
				<-prev.done
			}
		}
		open, err := x.w.write(ctx, batch, gen, markOpened)
		if prev != nil {
			<-prev.done
			if prev.err != nil && err == nil {
				open.abort()
				err = errEarlierBatchFailed
			}
		}
		if err != nil {
			c.err = err
			return
		}
		c.stats, c.err = open.finish(ctx, true, tip)
	}()
	return c
}

// committed accounts for a committed batch: it gives back the batch's
// credits, logs its dead letters, updates the metrics, and returns the
// new next height.
func (x *Cosmos) committed(ctx context.Context, c *batchCommit, credits <-chan struct{}, st cometbft.Status) int64 {
	for _, g := range c.batch {
		<-credits
		if g.err != nil {
			x.log.Warn("height moved to dead letters", "height", g.height, "err", g.err)
		} else {
			x.series.UndecodableTxs.Add(float64(g.block.Stats.UndecodableTxs))
			x.series.UnknownMessages.Add(float64(g.block.Stats.UnknownMessages))
			x.series.Messages.Add(float64(g.block.Stats.Messages))
			x.series.PartialMessages.Add(float64(g.block.Stats.PartialMessages))
			for _, t := range g.block.Stats.UnknownTypes {
				x.series.UnknownType(t)
			}
			x.series.ForeignEvents.Add(float64(g.block.Stats.ForeignEvents))
		}
	}
	for _, g := range c.batch {
		if g.err == nil && g.block.Stats.UnknownMessages > 0 {
			x.checkNodeVersion(ctx)
			break
		}
	}
	next := c.batch[len(c.batch)-1].height + 1
	x.series.IndexedHeight.Set(float64(next - 1))
	x.series.Lag.Set(float64(max(0, st.LatestHeight-(next-1))))
	x.series.Blocks.Add(float64(c.stats.blocks))
	x.series.Events.Add(float64(c.stats.events))
	if c.stats.failed > 0 {
		RefreshDeadLetterGauges(ctx, x.db, x.cfg.ID, x.series)
	}
	return next
}

// genesisFor returns the state at genesis to write with the batch starting
// at next, when next is the chain's initial height and both the source and
// the adapter know genesis; nil otherwise. The genesis is read only when
// next is 1 or the node's earliest height (a chain whose initial height is
// above 1 starts there). A chain indexed from a later height has no state at
// genesis: its balances before that height are unknown (no genesis_imports
// row), which the balance readers must say rather than guess. Once settled
// (imported, or known not to apply) the Run does not look again.
func (x *Cosmos) genesisFor(ctx context.Context, next int64, st cometbft.Status) (*genesisRows, error) {
	if x.genesisSettled {
		return nil, nil
	}
	ga, ok := x.adapter.(chains.GenesisAdapter)
	if !ok {
		x.genesisSettled = true
		return nil, nil
	}
	gs, ok := x.src.(GenesisSource)
	if !ok || (next != 1 && next != st.EarliestHeight) {
		return x.stateFor(ctx, next)
	}
	doc, err := gs.Genesis(ctx)
	var re *cometbft.RPCError
	var he *cometbft.HeightError
	if errors.As(err, &re) || errors.As(err, &he) {
		// The node answered that it does not serve the genesis. Started at
		// its earliest height after the first (a pruned node), the state
		// before it may still be served.
		if next > 1 {
			return x.stateFor(ctx, next)
		}
		x.log.Warn("the node does not serve the genesis: balances before the first indexed height are unknown", "err", err)
		x.genesisSettled = true
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("indexer %s: genesis: %w", x.cfg.ID, err)
	}
	g, err := chains.ParseGenesis(doc)
	if err != nil {
		return nil, fmt.Errorf("indexer %s: %w", x.cfg.ID, err)
	}
	if g.ChainID != x.cfg.ID {
		return nil, fmt.Errorf("indexer %s: the node's genesis is of chain %q", x.cfg.ID, g.ChainID)
	}
	if g.InitialHeight != next {
		return x.stateFor(ctx, next)
	}
	rows := chains.NewRows()
	if err := ga.GenesisRows(g, rows); errors.Is(err, chains.ErrGenesisUnsupported) {
		x.log.Warn("genesis state not imported: balances before the first indexed height are unknown", "err", err)
		x.genesisSettled = true
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("indexer %s: genesis state: %w", x.cfg.ID, err)
	}
	return &genesisRows{genesis: g, tables: ga.GenesisTables(), rows: rows}, nil
}

// stateFor returns the opening state to write with the first batch of a
// chain indexed from next, after its initial height: the node's bank state
// at next-1, its delegations, and the adapter's own opening state
// (chains.OpeningStateAdapter), each staged page by page (resumed after a
// crash). Without a BankState, or on a resumed run, the state before next
// stays unknown. A part the node does not serve at next-1 (pruned state, a
// query it lacks) is said to be missing and the rest is imported.
func (x *Cosmos) stateFor(ctx context.Context, next int64) (*genesisRows, error) {
	if x.State == nil || !x.fresh || next <= 1 {
		if x.fresh && next > 1 {
			x.log.Warn("indexing starts after the chain's initial height: balances before it are unknown", "start", next)
		}
		x.genesisSettled = true
		return nil, nil
	}
	height := next - 1
	staged := false
	n, err := stageBankState(ctx, x.db, x.State, x.cfg.ID, height)
	switch {
	case errors.Is(err, ErrStateUnavailable):
		x.log.Warn("the node serves no bank state at the height before the first indexed one: balances before it are unknown (portfolio, supply and holder endpoints answer 503)",
			"height", height, "err", err)
		// Pages staged before the node stopped serving the height go: no
		// import will use them.
		if err := clearStaged(ctx, x.db, x.cfg.ID, []string{stagedBank}); err != nil {
			return nil, fmt.Errorf("indexer %s: %w", x.cfg.ID, err)
		}
	case err != nil:
		return nil, fmt.Errorf("indexer %s: state at %d: %w", x.cfg.ID, height, err)
	default:
		staged = true
		x.log.Info("bank state staged for import", "height", height, "balances", n)
	}
	bank := staged
	if ss, ok := x.State.(StakingState); ok {
		d, err := stageStakingState(ctx, x.db, ss, x.cfg.ID, height)
		switch {
		case errors.Is(err, ErrStateUnavailable):
			x.log.Warn("the node serves no staking state at the height before the first indexed one: delegations before it are unknown",
				"height", height, "err", err)
			if err := clearStaged(ctx, x.db, x.cfg.ID, []string{stagedStaking}); err != nil {
				return nil, fmt.Errorf("indexer %s: %w", x.cfg.ID, err)
			}
		case err != nil:
			return nil, fmt.Errorf("indexer %s: staking state at %d: %w", x.cfg.ID, height, err)
		default:
			staged = true
			x.log.Info("staking state staged for import", "height", height, "delegations", d)
		}
	}
	oa, isOpening := x.adapter.(chains.OpeningStateAdapter)
	src, serves := x.State.(OpeningState)
	if isOpening && serves {
		// Query by query: one the node does not serve (a store it cannot
		// read at a past height) leaves the others imported.
		missing, unneeded := map[string]bool{}, map[string]bool{}
		for _, q := range oa.OpeningQueries() {
			if (q.Unless != "" && !missing[q.Unless]) || (q.Each != nil && unneeded[q.Each.After]) {
				unneeded[q.Name()] = true // a fallback of what was imported
				continue
			}
			var r int64
			var err error
			if q.Each != nil && missing[q.Each.After] {
				err = fmt.Errorf("%w: it reads what %s did not import", ErrStateUnavailable, q.Each.After)
			} else {
				r, err = stageOpeningQuery(ctx, x.db, src, oa, q, x.cfg.ID, height)
			}
			if errors.Is(err, ErrStateUnavailable) {
				missing[q.Name()] = true
			}
			switch {
			case errors.Is(err, ErrStateUnavailable):
				x.log.Warn("the node serves no chain state at the height before the first indexed one: reports that start from it (open positions, pools) are unknown",
					"height", height, "query", q.Name(), "err", err)
				if err := clearStaged(ctx, x.db, x.cfg.ID, []string{q.Name()}, openingTablesOf(oa, q)...); err != nil {
					return nil, fmt.Errorf("indexer %s: %w", x.cfg.ID, err)
				}
			case err != nil:
				return nil, fmt.Errorf("indexer %s: chain state at %d: %w", x.cfg.ID, height, err)
			default:
				staged = true
				x.log.Info("chain state staged for import", "height", height, "query", q.Name(), "rows", r)
			}
		}
	}
	if !staged {
		x.genesisSettled = true
		return nil, nil
	}
	return &genesisRows{stateHeight: height, bank: bank}, nil
}

// readyBatch returns the batch to commit next from the fetched heights
// waiting from next on, or nil: a full batch of contiguous heights, or a
// shorter one when it reaches target, when many heights wait (those
// missing are slow), or when a height read as a stream follows it. A
// height read as a stream is a batch of its own.
func readyBatch(pending map[int64]*fetched, next, target int64, size, window int) []*fetched {
	var batch []*fetched
	for h := next; len(batch) < size; h++ {
		g, ok := pending[h]
		if !ok {
			break
		}
		if g.spill != nil {
			if len(batch) == 0 {
				return []*fetched{g}
			}
			return batch
		}
		batch = append(batch, g)
	}
	if len(batch) == 0 || (len(batch) < size && batch[len(batch)-1].height < target && len(pending) < window/2) {
		return nil
	}
	return batch
}

// noAnswer reports whether err is the transport's: no answer came at all
// (the connection refused, reset or timed out), as opposed to an answer
// the node gave (an error status, a JSON-RPC error, a bad body).
func noAnswer(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// errFatal marks failures that stop the indexer (a pruned height).
var errFatal = errors.New("fatal")

// fetch gets, decodes and adapts one height. Transport failures are
// retried inside the client; what still fails becomes a dead letter. A
// /block_results answer larger than StreamAbove is read as a stream
// (fetchStream); inOrder tells that the caller commits heights in height
// order as they come (the catch-up), so that its spilled heights count
// against the stream lane's bound until they are released.
func (x *Cosmos) fetch(ctx context.Context, h int64, enc chains.AttrEncoding, inOrder bool) *fetched {
	var blockRaw []byte
	var ans cometbft.Answer
	var blockErr, resultsErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); blockRaw, blockErr = x.src.Block(ctx, h) }()
	var set *commitSet
	if vs, ok := x.src.(ValidatorsSource); ok && h > 1 && x.validatorSets.wanted() {
		set = &commitSet{height: h - 1}
		wg.Add(1)
		go func() { defer wg.Done(); set.members, set.err = vs.Validators(ctx, h-1) }()
	}
	ans, resultsErr = x.src.BlockResults(ctx, h, x.inMemoryMax())
	wg.Wait()
	if err := errors.Join(blockErr, resultsErr); err != nil {
		if ans.Stream != nil {
			ans.Stream.Close()
		}
		return fetchFailed(h, err)
	}
	if ans.Stream != nil {
		return x.fetchStream(ctx, h, enc, blockRaw, ans.Stream, inOrder, set)
	}
	return x.decodeWhole(h, enc, blockRaw, ans.Result, set)
}

// inMemoryMax is the answer size read whole: StreamAbove, unless the
// adapter cannot stream.
func (x *Cosmos) inMemoryMax() int64 {
	if _, ok := x.adapter.(chains.StreamAdapter); ok && x.StreamAbove > 0 {
		return x.StreamAbove
	}
	return cometbft.MaxResponseBytes
}

// fetchFailed is the fetched of a height whose fetch failed: fatal when the
// node pruned it.
func fetchFailed(h int64, err error) *fetched {
	f := &fetched{height: h}
	var he *cometbft.HeightError
	if errors.As(err, &he) && he.Pruned {
		f.err = fmt.Errorf("%w: %v", errFatal, err)
		return f
	}
	if noAnswer(err) {
		// No answer at all (refused, reset, timed out) after the client's
		// retries: the node is gone, not the height bad. A node that
		// answers other heights and fails this one makes a dead letter.
		f.err = fmt.Errorf("%w: fetch height %d: %w", ErrNodeUnavailable, h, err)
		return f
	}
	f.err = fmt.Errorf("fetch height %d: %w", h, err)
	return f
}

// decodeWhole decodes and adapts a height held in memory.
func (x *Cosmos) decodeWhole(h int64, enc chains.AttrEncoding, blockRaw, resultsRaw []byte, set *commitSet) *fetched {
	f := &fetched{height: h}
	b, err := x.adapter.Decode(chains.RawBlock{ChainID: x.cfg.ID, Height: h, Block: blockRaw, Results: resultsRaw}, enc)
	if err != nil {
		x.series.DecodeErrors.Inc()
		f.err = fmt.Errorf("decode height %d: %w", h, err)
		return f
	}
	x.attributeCommit(b, set)
	rows := chains.NewRows()
	if err := rawRows(b, rows, x.cfg.Raw); err != nil {
		f.err = fmt.Errorf("rows of height %d: %w", h, err)
		return f
	}
	if err := x.adapter.Rows(b, rows); err != nil {
		x.series.DecodeErrors.Inc()
		f.err = fmt.Errorf("adapt height %d: %w", h, err)
		return f
	}
	text, err := x.w.encode(rows)
	if err != nil {
		f.err = fmt.Errorf("rows of height %d: %w", h, err)
		return f
	}
	f.block, f.text, f.events = b, text, countEvents(b)
	return f
}

// retryDeadLetters retries dead letters (due ones only, or all), one
// height per transaction; the checkpoint does not move.
func (x *Cosmos) retryDeadLetters(ctx context.Context, st cometbft.Status, dueOnly bool) error {
	dls, err := DeadLetters(ctx, x.db, x.cfg.ID, dueOnly)
	if err != nil {
		return err
	}
	enc := chains.AttrAuto
	if st.Base64Attributes() {
		enc = chains.AttrBase64
	}
	for _, dl := range dls {
		f := x.fetch(ctx, dl.Height, enc, false)
		_, err := x.w.commit(ctx, []*fetched{f}, false, st.LatestHeight)
		f.release()
		if err != nil {
			return err
		}
		if f.err == nil {
			x.log.Info("dead letter indexed", "height", dl.Height)
		}
	}
	RefreshDeadLetterGauges(ctx, x.db, x.cfg.ID, x.series)
	return nil
}
