// Package evm follows an EVM chain into Postgres: the ERC-20 movements of
// the configured token contracts (package chains/evm) and the header of
// every block, gap-free and reorg-safe.
//
// The indexer reads block ranges with eth_getLogs (filtered by the token
// addresses and the topics chains/evm decodes) and batched
// eth_getBlockByNumber headers, only up to latest - confirmations. The
// eth_getLogs range adapts: it halves when the node answers "too many
// results" (or a response-size or range-limit error) and grows back on
// success. Ranges are fetched Concurrency at a time and committed strictly
// in order, each in one transaction with the checkpoint (sync_state).
// Before a range is committed, its first block's parent hash is checked
// against the stored hash of the height below; on a mismatch the indexer
// finds the highest stored block the node still has, deletes everything
// above it and moves the checkpoint back in one transaction, then goes on.
// Transport failures are retried with backoff and, if the node stays
// unreachable, the indexer waits; a block the node keeps refusing goes to
// dead_letters, like the cosmos indexer's heights, and is retried later.
package evm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/uptrace/bun"

	chainevm "github.com/chainlens/chainlens/chains/evm"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer"
)

// Retry is the backoff of one RPC call: Attempts calls in all, waiting
// Base, then twice as long each time, up to Max.
type Retry struct {
	Attempts  int
	Base, Max time.Duration
}

// Indexer indexes one EVM chain.
type Indexer struct {
	cfg config.Chain
	db  *bun.DB
	// nodes are the chain's endpoints (cfg.RPC order); node is the one in
	// use: a failed call moves to the next.
	nodes  []*ethclient.Client
	node   atomic.Int32
	log    *slog.Logger
	series indexer.ChainSeries
	tokens []common.Address
	isTok  map[common.Address]bool
	topics [][]common.Hash
	// owners are the configured owners of TetherToken-style tokens.
	owners map[common.Address]string
	// cctp is the chain's CCTP deployment, if configured.
	cctp *chainevm.CCTP

	// Retry is the backoff of a failing RPC call.
	Retry Retry
	// RetryEvery is how often due dead letters are retried.
	RetryEvery time.Duration
	// CallTimeout bounds one RPC call (or batch).
	CallTimeout time.Duration
	// HeaderBatch is the number of eth_getBlockByNumber calls per JSON-RPC batch.
	HeaderBatch int
	// GiveUpAfter, when positive, ends Run with an error once the node has
	// been unreachable for that long (index --until: an unreachable node
	// fails the command instead of being waited for ever).
	GiveUpAfter time.Duration
	// SessionDB, when set, holds the chain's indexing lock for the run: a
	// direct connection when the database is reached through a pooler in
	// transaction mode, which cannot keep a session lock (database.session_url).
	SessionDB *bun.DB

	maxSpan int64
	span    atomic.Int64 // current eth_getLogs range, 1..maxSpan

	mu         sync.Mutex
	partitions map[int64]bool
}

// New returns the indexer of one EVM chain (cfg.Kind "evm") reached through
// nodes, one client per endpoint, in cfg.RPC order: a call that fails on
// one is retried on the next. cfg.BatchSize is the widest block range
// fetched and committed at once (the eth_getLogs range starts there and
// adapts below it), cfg.Concurrency the number of ranges fetched in
// parallel. m may be nil.
func New(cfg config.Chain, db *bun.DB, nodes []*ethclient.Client, log *slog.Logger, m *indexer.Metrics) *Indexer {
	if m == nil {
		m, _ = indexer.NewMetrics(nil)
	}
	if log == nil {
		log = slog.Default()
	}
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = config.Duration(time.Second)
	}
	if cfg.Confirmations < 0 {
		cfg.Confirmations = 0
	}
	x := &Indexer{
		cfg: cfg, db: db, nodes: nodes, log: log.With("chain", cfg.ID), series: m.Chain(cfg.ID),
		isTok:       map[common.Address]bool{},
		topics:      [][]common.Hash{chainevm.Topics()},
		Retry:       Retry{Attempts: 5, Base: 250 * time.Millisecond, Max: 5 * time.Second},
		RetryEvery:  30 * time.Second,
		CallTimeout: time.Minute,
		HeaderBatch: 100,
		maxSpan:     int64(max(cfg.BatchSize, 1)),
		partitions:  map[int64]bool{},
	}
	x.owners = map[common.Address]string{}
	for _, t := range cfg.Tokens {
		a := common.HexToAddress(t.Address)
		if !x.isTok[a] {
			x.isTok[a] = true
			x.tokens = append(x.tokens, a)
		}
		if t.Owner != "" {
			x.owners[a] = strings.ToLower(t.Owner)
		}
	}
	if c := cfg.CCTP; c != nil {
		x.cctp = &chainevm.CCTP{TokenMessenger: common.HexToAddress(c.TokenMessenger), MessageTransmitter: common.HexToAddress(c.MessageTransmitter)}
		// One eth_getLogs reads the tokens and the bridge contracts.
		x.tokens = append(x.tokens, x.cctp.TokenMessenger, x.cctp.MessageTransmitter)
		x.topics = [][]common.Hash{append(chainevm.Topics(), chainevm.CCTPTopics()...)}
	}
	x.span.Store(x.maxSpan)
	return x
}

// ChainID is the id of the indexed chain.
func (x *Indexer) ChainID() string { return x.cfg.ID }

// Span is the current eth_getLogs block range.
func (x *Indexer) Span() int64 { return x.span.Load() }

// Run follows the chain until ctx ends. With until > 0 it returns nil once
// every block through until is committed (and no dead letter at or below
// it remains), or an error naming the blocks that still fail.
func (x *Indexer) Run(ctx context.Context, until int64) error {
	if len(x.tokens) == 0 {
		return fmt.Errorf("indexer %s: no token contracts configured", x.cfg.ID)
	}
	if len(x.nodes) == 0 {
		return fmt.Errorf("indexer %s: no rpc endpoint configured", x.cfg.ID)
	}
	return indexer.Follow{DB: x.db, Chain: x.cfg, Blocks: "evm_blocks", Series: x.series, Log: x.log.With("tokens", len(x.tokens)),
		LockDB: x.SessionDB, RetryEvery: x.RetryEvery, GiveUpAfter: x.GiveUpAfter}.Run(ctx, &family{x: x}, until)
}

// family is an EVM chain as indexer.Follow reads it.
type family struct {
	x            *Indexer
	chainChecked bool // the node's EVM chain id was found right
}

// Start is the checkpoint, or the configured start (0 = genesis).
func (f *family) Start(ctx context.Context) (int64, error) { return f.x.startHeight(ctx) }

// Tip is the node's block number, and the last block with the configured
// confirmations. A node of another EVM chain ends the run.
func (f *family) Tip(ctx context.Context) (indexer.Tip, error) {
	x := f.x
	if !f.chainChecked {
		if err := x.checkChainID(ctx); err != nil {
			return indexer.Tip{}, transient(err)
		}
		f.chainChecked = true
	}
	var latest uint64
	if err := x.call(ctx, "eth_blockNumber", func(ctx context.Context, ec *ethclient.Client) (err error) {
		latest, err = ec.BlockNumber(ctx)
		return err
	}); err != nil {
		return indexer.Tip{}, transient(err)
	}
	return indexer.Tip{Latest: int64(latest), Target: int64(latest) - int64(x.cfg.Confirmations)}, nil
}

// CatchUp indexes [next, target]; a range that does not continue the
// stored chain (a reorg) rewinds to the common ancestor.
func (f *family) CatchUp(ctx context.Context, next, target int64, tip indexer.Tip) (int64, error) {
	n, err := f.x.catchUp(ctx, next, target, tip.Latest)
	var re *reorgError
	if errors.As(err, &re) {
		n, err = f.x.handleReorg(ctx, re)
	}
	return n, transient(err)
}

// RetryDeadLetters retries the chain's dead letters.
func (f *family) RetryDeadLetters(ctx context.Context, tip indexer.Tip, dueOnly bool) error {
	return f.x.retryDeadLetters(ctx, dueOnly, tip.Latest)
}

// AtTip checks that the stored tip is still the node's (see checkTip).
func (f *family) AtTip(ctx context.Context, next int64) (int64, error) {
	n, err := f.x.checkTip(ctx, next)
	return n, transient(err)
}

// transient marks the node's failures (nodeFailure) as what the run loop
// retries; others (the database's, the configuration's) end the run.
func transient(err error) error {
	if err != nil && nodeFailure(err) && !errors.Is(err, indexer.ErrNodeUnavailable) {
		return fmt.Errorf("%w: %w", indexer.ErrNodeUnavailable, err)
	}
	return err
}

// checkTip compares the stored tip with the node's block at its height
// while the indexer waits for new blocks, so that a reorg that replaces
// indexed blocks is handled before the chain grows past them. A block the
// node does not have (a lagging node, or a shorter branch) is not a reorg
// yet. It returns the new next height.
func (x *Indexer) checkTip(ctx context.Context, next int64) (int64, error) {
	stored, ok, err := x.storedHash(ctx, next-1)
	if err != nil || !ok {
		return next, err
	}
	hs, err := x.headers(ctx, next-1, next-1, true)
	if err != nil {
		return next, err
	}
	if hs[0] == nil || hs[0].Hash == stored {
		return next, nil
	}
	return x.handleReorg(ctx, &reorgError{height: next, stored: stored, node: hs[0].Hash})
}

// nodeFailure reports whether err is the node's (retried later), not the
// database's or the configuration's (fatal).
func nodeFailure(err error) bool {
	return errors.Is(err, errNode) || errors.Is(err, errPermanent)
}

// checkChainID compares eth_chainId with the configured evm_chain_id, or
// the EIP-155 id that ends the configured chain id ("ethereum-1",
// "base-8453") when it ends in one.
func (x *Indexer) checkChainID(ctx context.Context) error {
	want, ok := x.cfg.EVMChainNumber()
	if !ok {
		return nil
	}
	var got *big.Int
	if err := x.call(ctx, "eth_chainId", func(ctx context.Context, ec *ethclient.Client) (err error) {
		got, err = ec.ChainID(ctx)
		return err
	}); err != nil {
		return err
	}
	if !got.IsUint64() || got.Uint64() != want {
		return fmt.Errorf("indexer %s: the node serves EVM chain id %s, not %d", x.cfg.ID, got, want)
	}
	return nil
}

// startHeight is the checkpoint, or the configured start (0 = genesis).
func (x *Indexer) startHeight(ctx context.Context) (int64, error) {
	st, err := indexer.LoadStart(ctx, x.db, x.cfg, "evm_blocks", x.series)
	if err != nil || !st.Fresh {
		return st.Next, err
	}
	return max(x.cfg.StartHeight, 0), nil
}

// reorgError reports that the node's chain no longer holds the stored
// block at height-1: the block at height has another parent, or the node
// has another block there.
type reorgError struct {
	height       int64
	stored, node common.Hash
}

func (e *reorgError) Error() string {
	return fmt.Sprintf("block %d: stored %s, the node's chain has %s", e.height-1, e.stored.Hex(), e.node.Hex())
}

// catchUp indexes [next, target]: a dispatcher cuts ranges of the current
// span, Concurrency fetchers read them, and ranges are committed strictly
// in order. It returns the new next height, and a *reorgError when the
// next range does not continue the stored chain.
func (x *Indexer) catchUp(ctx context.Context, next, target, tip int64) (int64, error) {
	prev, havePrev, err := x.storedHash(ctx, next-1)
	if err != nil {
		return next, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := x.cfg.Concurrency
	type job struct{ from, to int64 }
	type result struct {
		from int64
		d    *rangeData
		err  error
	}
	jobs := make(chan job)
	results := make(chan result, workers)
	credits := make(chan struct{}, workers*2) // ranges in flight or waiting to commit
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				d, err := x.fetchRange(ctx, j.from, j.to)
				select {
				case results <- result{j.from, d, err}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for h := next; h <= target; {
			select {
			case credits <- struct{}{}:
			case <-ctx.Done():
				return
			}
			to := min(target, h+x.span.Load()-1)
			select {
			case jobs <- job{h, to}:
			case <-ctx.Done():
				return
			}
			h = to + 1
		}
	}()
	defer wg.Wait()
	defer cancel()

	pending := map[int64]result{}
	for next <= target {
		select {
		case r := <-results:
			pending[r.from] = r
		case <-ctx.Done():
			return next, ctx.Err()
		}
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			<-credits
			if r.err != nil {
				return next, r.err
			}
			d := r.d
			if first := d.headers[0]; first != nil && havePrev && first.ParentHash != prev {
				return next, &reorgError{height: next, stored: prev, node: first.ParentHash}
			}
			if err := x.commit(ctx, d, true, tip); err != nil {
				return next, fmt.Errorf("indexer %s: %w", x.cfg.ID, err)
			}
			prev, havePrev = d.lastHash()
			next = d.to + 1
			x.series.IndexedHeight.Set(float64(next - 1))
			x.series.Blocks.Add(float64(d.blocks()))
			x.series.Events.Add(float64(len(d.moves)))
			if len(d.failed) > 0 {
				x.series.DecodeErrors.Add(float64(len(d.failed)))
				for h, err := range d.failed {
					x.log.Warn("block moved to dead letters", "height", h, "err", err)
				}
				indexer.RefreshDeadLetterGauges(ctx, x.db, x.cfg.ID, x.series)
			}
		}
	}
	return next, nil
}

// handleReorg finds the common ancestor of the stored chain and the node's
// below re.height, and rewinds to it. It returns the new next height.
func (x *Indexer) handleReorg(ctx context.Context, re *reorgError) (int64, error) {
	ancestor, err := x.findAncestor(ctx, re.height-1)
	if err != nil {
		return re.height, err
	}
	x.log.Warn("chain reorganisation: rewinding", "detected_at", re.height, "common_ancestor", ancestor,
		"depth", re.height-1-ancestor, "detail", re.Error())
	if err := x.rewind(ctx, ancestor, re.height); err != nil {
		return re.height, fmt.Errorf("indexer %s: %w", x.cfg.ID, err)
	}
	x.series.IndexedHeight.Set(float64(ancestor))
	indexer.RefreshDeadLetterGauges(ctx, x.db, x.cfg.ID, x.series)
	return ancestor + 1, nil
}

// Dial returns a client for each endpoint, in order (nothing is sent
// before the first call); close them with CloseAll.
func Dial(urls []string) ([]*ethclient.Client, error) {
	out := make([]*ethclient.Client, 0, len(urls))
	for _, u := range urls {
		c, err := ethclient.Dial(u)
		if err != nil {
			CloseAll(out)
			return nil, fmt.Errorf("rpc %s: %w", u, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// CloseAll closes the clients Dial returned.
func CloseAll(cs []*ethclient.Client) {
	for _, c := range cs {
		c.Close()
	}
}
