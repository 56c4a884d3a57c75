package evm_test

import (
	"context"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer"
	evmindexer "github.com/chainlens/chainlens/indexer/evm"
	"github.com/chainlens/chainlens/internal/testdb"
)

func checkpoint(t testing.TB, db *bun.DB) int64 {
	t.Helper()
	return count(t, db, "SELECT coalesce(max(next_height), 0) FROM sync_state WHERE chain_id = ?", chainID)
}

// TestIndexDevnode deploys USDC-, USDT- and DAI-like tokens on a real
// in-process geth dev node, mints, transfers, issues, redeems and burns
// known amounts (one reverted transfer among them), indexes the chain over
// HTTP JSON-RPC and checks: the exact rows; that nothing past
// latest - confirmations is indexed; the stored headers; and that every
// balance rebuilt from erc20_transfers equals balanceOf by eth_call at the
// same block, and mints - burns equals totalSupply.
func TestIndexDevnode(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOptions{})
	db, _ := testdb.New(t)
	e := &expected{n: n}

	usdc, _ := n.deploy("deployer", "FiatTokenLike", "USD Coin (devnet)", "USDC")
	usdt, _ := n.deploy("treasury", "TetherTokenLike", big.NewInt(0), "Tether USD (devnet)", "USDT", big.NewInt(6))
	dai, _ := n.deploy("daimaker", "DaiLike")
	n.commit() // 1

	n.tx("deployer", usdc, "configureMinter", n.addr("minter"), units(1_000_000_000, 6))
	daiMint := new(big.Int).Add(units(5, 18), big.NewInt(123))
	e.want(n.tx("daimaker", dai, "mint", n.addr("alice"), daiMint), dai, "mint", "", "alice", daiMint)
	e.want(n.tx("treasury", usdt, "issue", units(1_000_000, 6)), usdt, "mint", "", "treasury", units(1_000_000, 6))
	n.commit() // 2

	e.want(n.tx("minter", usdc, "mint", n.addr("alice"), units(1000, 6)), usdc, "mint", "", "alice", units(1000, 6))
	e.want(n.tx("minter", usdc, "mint", n.addr("bob"), big.NewInt(250_500000)), usdc, "mint", "", "bob", big.NewInt(250_500000))
	e.want(n.tx("treasury", usdt, "transfer", n.addr("alice"), units(300, 6)), usdt, "transfer", "treasury", "alice", units(300, 6))
	n.tx("alice", usdt, "approve", n.addr("bob"), units(10, 6))
	reverted := n.tx("carol", usdc, "transfer", n.addr("alice"), big.NewInt(1)) // carol has no USDC
	n.commit()                                                                  // 3

	e.want(n.tx("alice", usdc, "transfer", n.addr("bob"), units(100, 6)), usdc, "transfer", "alice", "bob", units(100, 6))
	e.want(n.tx("alice", usdc, "transfer", n.addr("carol"), big.NewInt(0)), usdc, "transfer", "alice", "carol", big.NewInt(0))
	e.want(n.tx("bob", usdc, "transfer", n.addr("carol"), big.NewInt(50)), usdc, "transfer", "bob", "carol", big.NewInt(50))
	daiMove := new(big.Int).Add(units(1, 18), units(5, 17))
	e.want(n.tx("alice", dai, "transfer", n.addr("carol"), daiMove), dai, "transfer", "alice", "carol", daiMove)
	e.want(n.tx("bob", usdt, "transferFrom", n.addr("alice"), n.addr("dave"), units(4, 6)), usdt, "transfer", "alice", "dave", units(4, 6))
	n.commit() // 4

	e.want(n.tx("bob", usdc, "transfer", n.addr("minter"), units(20, 6)), usdc, "transfer", "bob", "minter", units(20, 6))
	n.commit() // 5
	n.commit() // 6: empty

	e.want(n.tx("minter", usdc, "burn", units(20, 6)), usdc, "burn", "minter", "", units(20, 6))
	e.want(n.tx("treasury", usdt, "redeem", units(100, 6)), usdt, "burn", "treasury", "", units(100, 6))
	e.want(n.tx("alice", dai, "burn", n.addr("alice"), units(1, 18)), dai, "burn", "alice", "", units(1, 18))
	e.want(n.tx("alice", usdt, "transfer", n.addr("bob"), big.NewInt(7)), usdt, "transfer", "alice", "bob", big.NewInt(7))
	h := n.commit() // 7
	if h != 7 {
		t.Fatalf("head %d, want 7", h)
	}
	e.resolve()
	if r := n.receipt(reverted); r.Status != 0 || len(r.Logs) != 0 {
		t.Fatalf("the over-balance transfer should revert without logs: status %d, %d logs", r.Status, len(r.Logs))
	}

	// Confirmations 2: with the head at 7 the indexer stops at 5 and waits.
	x := newIndexer(t, db, n.url, config.Chain{Confirmations: 2, BatchSize: 3, Concurrency: 2}, nil, usdc, usdt, dai)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- x.Run(ctx, h) }()
	waitFor(t, "blocks through latest - confirmations", 10*time.Second, func() bool { return checkpoint(t, db) == h-1 })
	time.Sleep(150 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Run returned before block %d had 2 confirmations: %v", h, err)
	default:
	}
	if cp := checkpoint(t, db); cp != h-1 {
		t.Fatalf("checkpoint %d: indexed past latest - confirmations (%d)", cp, h-2)
	}
	if got := count(t, db, "SELECT count(*) FROM evm_blocks WHERE height > ?", h-2); got != 0 {
		t.Fatalf("%d blocks above latest - confirmations stored", got)
	}
	n.commit()
	n.commit()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	if len(e.rows) != 15 {
		t.Fatalf("scenario produced %d rows, want 15", len(e.rows))
	}
	sameRows(t, "indexed rows", dbRows(t, db), e.rows)
	sameRows(t, "node's logs through chains/evm", nodeRows(t, n, h, usdc, usdt, dai), e.rows)
	checkBlocks(t, n, db, h)
	if got := count(t, db, "SELECT count(*) FROM dead_letters"); got != 0 {
		t.Fatalf("%d dead letters", got)
	}
	for _, c := range []contract{usdc, usdt, dai} {
		for _, at := range []int64{3, 4, h} {
			checkBalances(t, n, db, c, at)
		}
	}

	// Run again through the same block: nothing to do, nothing changes.
	if err := x.Run(ctx, h); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "rows after a second run", dbRows(t, db), e.rows)
}

// TestReorg indexes a chain, forks it below the indexed tip on the node
// (the simulated beacon's Fork: a longer branch with other transfers
// replaces the indexed blocks) and checks that the indexer detects it by
// parent hash, rewinds to the common ancestor and ends with exactly the
// canonical chain's rows and headers: first with Run(until), then live
// while the indexer follows the tip, then when a branch of the same height
// replaces the indexed tip and no new block follows.
func TestReorg(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOptions{})
	db, _ := testdb.New(t)
	e := &expected{n: n}
	dai, _ := n.deploy("daimaker", "DaiLike")
	n.commit() // 1
	e.want(n.tx("daimaker", dai, "mint", n.addr("alice"), units(100, 18)), dai, "mint", "", "alice", units(100, 18))
	n.commit() // 2
	e.want(n.tx("alice", dai, "transfer", n.addr("bob"), units(10, 18)), dai, "transfer", "alice", "bob", units(10, 18))
	n.commit() // 3
	e.want(n.tx("alice", dai, "transfer", n.addr("carol"), units(20, 18)), dai, "transfer", "alice", "carol", units(20, 18))
	n.commit() // 4
	e.want(n.tx("bob", dai, "transfer", n.addr("carol"), units(1, 18)), dai, "transfer", "bob", "carol", units(1, 18))
	n.commit() // 5
	n.commit() // 6
	e.resolve()

	rec := &logRecorder{}
	x := newIndexer(t, db, n.url, config.Chain{BatchSize: 2, Concurrency: 2}, slog.New(rec), dai)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := x.Run(ctx, 6); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "rows before the fork", dbRows(t, db), e.rows)
	checkBlocks(t, n, db, 6)
	old4 := n.hashAt(4)

	// A longer branch from block 3 replaces 4..6 with other transfers.
	n.fork(3)
	e.truncate(3)
	e.want(n.tx("alice", dai, "transfer", n.addr("dave"), units(33, 18)), dai, "transfer", "alice", "dave", units(33, 18))
	n.commit() // 4'
	e.want(n.tx("alice", dai, "transfer", n.addr("bob"), units(2, 18)), dai, "transfer", "alice", "bob", units(2, 18))
	e.want(n.tx("daimaker", dai, "mint", n.addr("carol"), units(5, 18)), dai, "mint", "", "carol", units(5, 18))
	n.commit() // 5'
	n.commit() // 6'
	n.commit() // 7'
	e.resolve()
	if n.hashAt(4) == old4 {
		t.Fatal("the fork did not replace block 4")
	}
	if err := x.Run(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if got := rec.find("chain reorganisation"); len(got) != 1 || !strings.Contains(got[0], "common_ancestor=3") {
		t.Fatalf("reorg log lines: %q", got)
	}
	sameRows(t, "rows after the fork", dbRows(t, db), e.rows)
	sameRows(t, "node's logs after the fork", nodeRows(t, n, 7, dai), e.rows)
	checkBlocks(t, n, db, 7)
	checkBalances(t, n, db, dai, 7)

	// Live: the indexer follows the tip while the chain forks under it again.
	live, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- x.Run(live, 0) }()
	n.fork(5)
	e.truncate(5)
	e.want(n.tx("bob", dai, "transfer", n.addr("alice"), units(1, 18)), dai, "transfer", "bob", "alice", units(1, 18))
	n.commit() // 6''
	n.commit() // 7''
	n.commit() // 8''
	e.want(n.tx("carol", dai, "transfer", n.addr("dave"), units(2, 18)), dai, "transfer", "carol", "dave", units(2, 18))
	n.commit() // 9''
	e.resolve()
	want9 := n.hashAt(9)
	waitFor(t, "the indexer to follow the new branch", 15*time.Second, func() bool {
		var h string
		_ = db.NewRaw("SELECT hash FROM evm_blocks WHERE chain_id = ? AND height = 9", chainID).Scan(context.Background(), &h)
		return checkpoint(t, db) == 10 && h == want9
	})
	if got := rec.find("chain reorganisation"); len(got) != 2 || !strings.Contains(got[1], "common_ancestor=5") {
		t.Fatalf("reorg log lines: %q", got)
	}
	sameRows(t, "rows after the live fork", dbRows(t, db), e.rows)
	checkBlocks(t, n, db, 9)

	// A branch of the same height replaces the indexed tip and no block
	// follows it: the idle tip check must notice.
	n.fork(7)
	e.truncate(7)
	e.want(n.tx("dave", dai, "transfer", n.addr("bob"), units(1, 17)), dai, "transfer", "dave", "bob", units(1, 17))
	n.commit() // 8, third branch
	n.commit() // 9, third branch
	e.resolve()
	want9 = n.hashAt(9)
	waitFor(t, "the indexer to replace its tip", 15*time.Second, func() bool {
		var h string
		_ = db.NewRaw("SELECT hash FROM evm_blocks WHERE chain_id = ? AND height = 9", chainID).Scan(context.Background(), &h)
		return checkpoint(t, db) == 10 && h == want9
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := rec.find("chain reorganisation"); len(got) != 3 || !strings.Contains(got[2], "common_ancestor=7") {
		t.Fatalf("reorg log lines: %q", got)
	}
	sameRows(t, "rows after the tip replacement", dbRows(t, db), e.rows)
	sameRows(t, "node's logs after the tip replacement", nodeRows(t, n, 9, dai), e.rows)
	checkBlocks(t, n, db, 9)
	checkBalances(t, n, db, dai, 9)

	// A run to a target already reached still compares the stored tip
	// with the node's: a branch of the same height replaced it while no
	// indexer ran.
	n.fork(8)
	e.truncate(8)
	e.want(n.tx("carol", dai, "transfer", n.addr("alice"), units(3, 17)), dai, "transfer", "carol", "alice", units(3, 17))
	n.commit() // 9, fourth branch
	e.resolve()
	if err := x.Run(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if got := rec.find("chain reorganisation"); len(got) != 4 || !strings.Contains(got[3], "common_ancestor=8") {
		t.Fatalf("reorg log lines: %q", got)
	}
	sameRows(t, "rows after a reorg below the target", dbRows(t, db), e.rows)
	checkBlocks(t, n, db, 9)
	checkBalances(t, n, db, dai, 9)
}

// adaptiveChain builds 32 blocks with DAI transfers in most of them.
func adaptiveChain(t *testing.T, n *devNode) (contract, *expected, int64) {
	e := &expected{n: n}
	dai, _ := n.deploy("daimaker", "DaiLike")
	n.commit()
	e.want(n.tx("daimaker", dai, "mint", n.addr("alice"), units(1000, 18)), dai, "mint", "", "alice", units(1000, 18))
	n.commit()
	to := []string{"bob", "carol", "dave"}
	for i := range 30 {
		if i%5 != 4 {
			v := big.NewInt(int64(i + 1))
			e.want(n.tx("alice", dai, "transfer", n.addr(to[i%3]), v), dai, "transfer", "alice", to[i%3], v)
		}
		if i%7 == 0 {
			v := big.NewInt(int64(1000 + i))
			e.want(n.tx("alice", dai, "transfer", n.addr("bob"), v), dai, "transfer", "alice", "bob", v)
		}
		n.commit()
	}
	e.resolve()
	return dai, e, n.head()
}

// TestAdaptiveRange indexes through a proxy that refuses eth_getLogs over
// more than 4 blocks ("query returned more than 10000 results") and fails
// the first 10 requests with HTTP 503, and against geth's own range limit: the
// range halves down to what is accepted, grows back, and the rows are
// exact.
func TestAdaptiveRange(t *testing.T) {
	t.Parallel()
	t.Run("proxy", func(t *testing.T) {
		n := startNode(t, nodeOptions{})
		dai, e, h := adaptiveChain(t, n)
		db, _ := testdb.New(t)
		p := newProxy(t, n.url)
		// 10 failures outlast the 3 attempts of a call: the indexer also
		// waits for the node and starts over.
		p.set(func(p *proxy) { p.limit, p.failFirst = 4, 10 })
		x := newIndexer(t, db, p.URL(), config.Chain{BatchSize: 64, Concurrency: 1}, nil, dai)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := x.Run(ctx, h); err != nil {
			t.Fatal(err)
		}
		sameRows(t, "rows", dbRows(t, db), e.rows)
		checkBlocks(t, n, db, h)
		checkBalances(t, n, db, dai, h)

		p.mu.Lock()
		calls, failed := p.calls, p.failed
		p.mu.Unlock()
		if failed != 10 {
			t.Fatalf("%d requests failed with 503, want 10 (retried)", failed)
		}
		rejected, firstReject, grewBack := 0, -1, false
		smallest := int64(1 << 62)
		for i, c := range calls {
			if !c.accepted {
				rejected++
				if firstReject < 0 {
					firstReject = i
				}
				continue
			}
			if c.size > 4 {
				t.Fatalf("accepted a range of %d blocks", c.size)
			}
			if firstReject >= 0 {
				smallest = min(smallest, c.size)
				grewBack = grewBack || (c.size == 4 && smallest < 4)
			}
		}
		if rejected == 0 || !grewBack {
			t.Fatalf("range never narrowed or never grew back: %d refusals, calls %v", rejected, calls)
		}
		if limit := 3*int((h+4)/4) + 8; len(calls) > limit {
			t.Fatalf("%d eth_getLogs calls for %d blocks (over %d): %v", len(calls), h+1, limit, calls)
		}
		t.Logf("%d eth_getLogs calls (%d refused) for %d blocks; final span %d", len(calls), rejected, h+1, x.Span())
	})
	t.Run("geth range limit", func(t *testing.T) {
		n := startNode(t, nodeOptions{rangeLimit: 4}) // geth accepts to - from <= 4
		dai, e, h := adaptiveChain(t, n)
		db, _ := testdb.New(t)
		x := newIndexer(t, db, n.url, config.Chain{BatchSize: 64, Concurrency: 2}, nil, dai)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := x.Run(ctx, h); err != nil {
			t.Fatal(err)
		}
		sameRows(t, "rows", dbRows(t, db), e.rows)
		checkBlocks(t, n, db, h)
		// The span narrowed to what geth accepts (5 blocks), probing one
		// step above it after successes.
		if x.Span() > 8 {
			t.Fatalf("span %d: never narrowed to geth's limit", x.Span())
		}
	})
}

// TestDeadLetter makes the node refuse eth_getLogs for one block: the
// block goes to dead_letters (its header is stored), every other block is
// indexed, Run(until) reports the failing block; once the node answers
// again, the next run retries the dead letter and the rows are complete.
func TestDeadLetter(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOptions{})
	db, _ := testdb.New(t)
	e := &expected{n: n}
	dai, _ := n.deploy("daimaker", "DaiLike")
	n.commit()
	e.want(n.tx("daimaker", dai, "mint", n.addr("alice"), units(50, 18)), dai, "mint", "", "alice", units(50, 18))
	n.commit()
	for i := range 6 {
		v := big.NewInt(int64(i + 1))
		e.want(n.tx("alice", dai, "transfer", n.addr("bob"), v), dai, "transfer", "alice", "bob", v)
		n.commit()
	}
	e.resolve()
	h := n.head() // 8
	const bad = 5

	p := newProxy(t, n.url)
	p.set(func(p *proxy) { p.badBlock = bad })
	x := newIndexer(t, db, p.URL(), config.Chain{BatchSize: 4, Concurrency: 2}, nil, dai)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := x.Run(ctx, h)
	if err == nil || !strings.Contains(err.Error(), "first 5") {
		t.Fatalf("Run = %v, want the failure of block %d", err, bad)
	}
	dls, err := indexer.DeadLetters(ctx, db, chainID, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 1 || dls[0].Height != bad || !strings.Contains(dls[0].LastError, "corrupt") {
		t.Fatalf("dead letters %+v", dls)
	}
	var partial []row
	for _, r := range e.rows {
		if r.Height != bad {
			partial = append(partial, r)
		}
	}
	sameRows(t, "rows without the dead block", dbRows(t, db), partial)
	checkBlocks(t, n, db, h) // the dead block's header is stored

	p.set(func(p *proxy) { p.badBlock = 0 })
	if err := x.Run(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got := count(t, db, "SELECT count(*) FROM dead_letters"); got != 0 {
		t.Fatalf("%d dead letters left", got)
	}
	sameRows(t, "rows after the retry", dbRows(t, db), e.rows)
	checkBalances(t, n, db, dai, h)

	// A node of another chain is refused.
	client, err := ethclient.Dial(n.url)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	wrong := evmindexer.New(config.Chain{ID: "ethereum-1", Kind: "evm", BatchSize: 4, Concurrency: 1,
		Tokens: []config.Token{{Address: dai.addr.Hex()}}}, db, []*ethclient.Client{client}, slog.New(slog.DiscardHandler), nil)
	if err := wrong.Run(ctx, 1); err == nil || !strings.Contains(err.Error(), "chain id 1337") {
		t.Fatalf("Run against the wrong chain = %v", err)
	}
}
