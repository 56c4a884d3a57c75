package devnet

import (
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	cmttypes "github.com/cometbft/cometbft/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"

	sdkmath "cosmossdk.io/math"
)

var txHashRE = regexp.MustCompile(`^[0-9A-F]{64}$`)

// TestDevnet runs every check against one real chain: testutil/network allows
// one network per process at a time.
func TestDevnet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))

	t0 := time.Now()
	n, err := Start(ctx, Options{BlockTime: 100 * time.Millisecond, Log: log})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("startup took %s", time.Since(t0).Round(time.Millisecond))
	t.Cleanup(func() { _ = n.Close() })

	if _, err := Start(ctx, Options{}); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second Start: got %v, want ErrAlreadyRunning", err)
	}

	// Identity and loopback-only endpoints.
	if n.ChainID() != DefaultChainID || n.Bech32Prefix() != "cosmos" {
		t.Fatalf("chain id %q prefix %q", n.ChainID(), n.Bech32Prefix())
	}
	for _, ep := range []string{n.RPCURL(), n.APIURL()} {
		u, err := url.Parse(ep)
		if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" || u.Port() == "" {
			t.Fatalf("endpoint %q is not http://127.0.0.1:PORT", ep)
		}
	}
	rpc, err := rpchttp.New(n.RPCURL(), "/websocket")
	if err != nil {
		t.Fatalf("rpc client: %v", err)
	}
	st, err := rpc.Status(ctx)
	if err != nil {
		t.Fatalf("/status: %v", err)
	}
	if st.NodeInfo.Network != n.ChainID() {
		t.Fatalf("/status network %q, want %q", st.NodeInfo.Network, n.ChainID())
	}
	if err := checkLoopback(st.NodeInfo.ListenAddr); err != nil {
		t.Fatalf("p2p listen address: %v", err)
	}

	accts := map[string]string{}
	for _, a := range n.Accounts() {
		if !strings.HasPrefix(a.Address, "cosmos1") {
			t.Fatalf("account %+v", a)
		}
		accts[a.Name] = a.Address
	}
	for _, name := range []string{"node0", "user0", "user1", "user2"} {
		if accts[name] == "" {
			t.Fatalf("no account %s in %v", name, accts)
		}
	}
	if len(accts) != 4 {
		t.Fatalf("accounts %v", accts)
	}
	vals := n.Validators()
	if len(vals) != 1 || !strings.HasPrefix(vals[0], "cosmosvaloper1") {
		t.Fatalf("validators %v", vals)
	}

	balanceAt := func(addr string, h int64) int64 {
		t.Helper()
		cc := n.ClientContext()
		if h > 0 {
			cc = cc.WithHeight(h)
		}
		res, err := banktypes.NewQueryClient(cc).Balance(ctx, &banktypes.QueryBalanceRequest{Address: addr, Denom: BondDenom})
		if err != nil {
			t.Fatalf("balance of %s at %d: %v", addr, h, err)
		}
		return res.Balance.Amount.Int64()
	}
	coins := func(a int64) sdk.Coins { return sdk.NewCoins(sdk.NewCoin(BondDenom, sdkmath.NewInt(a))) }

	type sent struct {
		kind   string
		hash   string
		height int64
		amount int64
	}
	var txs []sent
	t1 := time.Now()

	// Three transfers into user1, one delegation, one withdrawal.
	receiver := accts["user1"]
	before := balanceAt(receiver, 0)
	if before != UserFunds {
		t.Fatalf("user1 genesis balance %d, want %d", before, UserFunds)
	}
	for _, s := range []struct {
		from   string
		amount int64
	}{{"node0", 100}, {accts["user0"], 250}, {"user2", 375}} {
		hash, h, err := n.Send(ctx, s.from, receiver, coins(s.amount))
		if err != nil {
			t.Fatalf("send from %s: %v", s.from, err)
		}
		txs = append(txs, sent{"send", hash, h, s.amount})
	}
	hash, h, err := n.Delegate(ctx, "user0", vals[0], sdk.NewCoin(BondDenom, sdkmath.NewInt(1_000_000)))
	if err != nil {
		t.Fatalf("delegate: %v", err)
	}
	txs = append(txs, sent{"delegate", hash, h, 0})
	hash, h, err = n.WithdrawRewards(ctx, "user0", vals[0])
	if err != nil {
		t.Fatalf("withdraw: %v", err)
	}
	txs = append(txs, sent{"withdraw", hash, h, 0})
	t.Logf("5 txs took %s", time.Since(t1).Round(time.Millisecond))

	// Each hash is in its block, with code 0, seen through the HTTP RPC.
	for _, tx := range txs {
		if !txHashRE.MatchString(tx.hash) {
			t.Fatalf("%s hash %q is not upper-case hex", tx.kind, tx.hash)
		}
		hb, _ := hex.DecodeString(tx.hash)
		res, err := rpc.Tx(ctx, hb, false)
		if err != nil {
			t.Fatalf("/tx %s: %v", tx.hash, err)
		}
		if res.Height != tx.height || res.TxResult.Code != 0 {
			t.Fatalf("%s %s: height %d code %d (%s), want height %d code 0",
				tx.kind, tx.hash, res.Height, res.TxResult.Code, res.TxResult.Log, tx.height)
		}
		blk, err := rpc.Block(ctx, &tx.height)
		if err != nil {
			t.Fatalf("/block %d: %v", tx.height, err)
		}
		found := false
		for _, btx := range blk.Block.Txs {
			if strings.EqualFold(hex.EncodeToString(cmttypes.Tx(btx).Hash()), tx.hash) {
				found = true
			}
		}
		if !found {
			t.Fatalf("%s %s not in block %d", tx.kind, tx.hash, tx.height)
		}
	}

	// Exact balances: in total, and block by block for each transfer.
	if after := balanceAt(receiver, 0); after-before != 100+250+375 {
		t.Fatalf("user1 balance %d -> %d, want +725", before, after)
	}
	for _, tx := range txs[:3] {
		if d := balanceAt(receiver, tx.height) - balanceAt(receiver, tx.height-1); d != tx.amount {
			t.Fatalf("user1 balance change at height %d: %d, want %d", tx.height, d, tx.amount)
		}
	}
	delegation := func() int64 {
		t.Helper()
		res, err := stakingtypes.NewQueryClient(n.ClientContext()).Delegation(ctx,
			&stakingtypes.QueryDelegationRequest{DelegatorAddr: accts["user0"], ValidatorAddr: vals[0]})
		if err != nil {
			t.Fatalf("delegation: %v", err)
		}
		return res.DelegationResponse.Balance.Amount.Int64()
	}
	if d := delegation(); d != 1_000_000 {
		t.Fatalf("delegation %d, want 1000000", d)
	}

	// A transaction failing in its block is an error naming code and log.
	hash, h, err = n.Send(ctx, "user2", "user0", coins(10*UserFunds))
	if err == nil || !strings.Contains(err.Error(), "code 5") || !strings.Contains(err.Error(), "insufficient funds") {
		t.Fatalf("overdrawn send: got %v, want code 5 insufficient funds", err)
	}
	if !txHashRE.MatchString(hash) || h <= 0 {
		t.Fatalf("overdrawn send: hash %q height %d", hash, h)
	}

	// RunTraffic: runs its cycle (the delegation is its 4th tx), nil on cancel.
	tctx, stop := context.WithTimeout(ctx, 20*time.Second)
	done := make(chan error, 1)
	go func() { done <- n.RunTraffic(tctx, 50*time.Millisecond) }()
	for delegation() < 1_000_000+TrafficDelegateAmount {
		select {
		case err := <-done:
			t.Fatalf("RunTraffic ended early: %v", err)
		case <-tctx.Done():
			t.Fatalf("RunTraffic made no delegation in time")
		case <-time.After(100 * time.Millisecond):
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("RunTraffic: %v", err)
	}
	cur, err := n.Height(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.WaitForHeight(ctx, cur+1); err != nil {
		t.Fatalf("WaitForHeight: %v", err)
	}

	// Close: idempotent, removes the temp dir, releases the process lock.
	dir := n.Dir()
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("dir %s still there: %v", dir, err)
	}
	if _, _, err := n.Send(ctx, "user0", "user1", coins(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after Close: %v", err)
	}
	if _, err := Start(ctx, Options{RPCListen: "0.0.0.0:26657"}); err == nil || !strings.Contains(err.Error(), "not loopback") {
		t.Fatalf("Start on 0.0.0.0: got %v, want a loopback error", err)
	}

	// A failed network.New keeps testutil/network's lock; Start releases it.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir() // left empty by the failed Start, reused below
	if _, err := Start(ctx, Options{RPCListen: busy.Addr().String(), Dir: dir2, Log: log}); err == nil {
		t.Fatalf("Start on a busy RPC port succeeded")
	} else {
		t.Logf("Start on a busy RPC port: %v", err)
	}
	rpcListen := busy.Addr().String()
	if err := busy.Close(); err != nil {
		t.Fatal(err)
	}

	t2 := time.Now()
	n2, err := Start(ctx, Options{ChainID: "chainlens-devnet-2", RPCListen: rpcListen, Dir: dir2, Log: log})
	if err != nil {
		t.Fatalf("Start after Close: %v", err)
	}
	if err := n2.WaitForHeight(ctx, 2); err != nil {
		t.Fatalf("second net: %v", err)
	}
	if n2.RPCURL() != "http://"+rpcListen || n2.ChainID() != "chainlens-devnet-2" {
		t.Fatalf("second net: rpc %s chain %s", n2.RPCURL(), n2.ChainID())
	}
	if n2.Accounts()[1].Address != accts["user0"] {
		t.Fatalf("user0 address changed between runs: %s vs %s", n2.Accounts()[1].Address, accts["user0"])
	}
	if err := n2.Close(); err != nil {
		t.Fatalf("Close second net: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir2, "node0")); err != nil {
		t.Fatalf("a given Dir is kept after Close: %v", err)
	}
	t.Logf("restart + close took %s", time.Since(t2).Round(time.Millisecond))
}

// TestTNLoggerOneCleanup checks the adapter lets exactly one
// network.(*Network).Cleanup through: Close's, then parks the signal
// handler's, and records the failures Cleanup logs.
func TestTNLoggerOneCleanup(t *testing.T) {
	l := newTNLogger(slog.New(slog.DiscardHandler))
	if !l.claimCleanup() {
		t.Fatal("first claim refused")
	}
	l.Log(msgCleanupStart) // Close's own Cleanup goes on
	l.Log("failed to stop validator CometBFT node", "err", errors.New("boom"))
	parked := make(chan struct{})
	go func() {
		l.Log(msgCleanupStart) // the signal handler's Cleanup must not go on
		close(parked)
	}()
	l.Log(msgCleanupEnd)
	<-l.done
	select {
	case <-parked:
		t.Fatal("second cleanup was not parked")
	case <-time.After(50 * time.Millisecond):
	}
	if l.claimCleanup() {
		t.Fatal("second claim granted")
	}
	if err := l.err(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("recorded failures: %v", err)
	}
}
