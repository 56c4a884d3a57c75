package indexer_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	sdkmath "cosmossdk.io/math"
	sdk "github.com/cosmos/cosmos-sdk/types"

	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/devnet"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/internal/devnettest"
	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store/descriptors"
)

// TestIndexLiveDevnet runs a real cosmos-sdk chain in process, sends known
// transfers and a delegation, indexes it and checks the exact rows, and
// that every user's balance rebuilt from the indexed balance changes equals the
// chain's own bank balance at the indexed height.
func TestIndexLiveDevnet(t *testing.T) {
	t.Parallel()
	n, ctx, addr := devnettest.Start(t, 2*time.Minute)
	db, _ := testdb.New(t)
	type sent struct {
		from, to string
		amount   int64
		hash     string
		height   int64
	}
	sends := []sent{{from: "user0", to: "user1", amount: 1234}, {from: "user2", to: "user1", amount: 55}, {from: "user1", to: "user0", amount: 7}}
	var err error
	for i := range sends {
		s := &sends[i]
		s.hash, s.height, err = n.Send(ctx, s.from, addr[s.to], sdk.NewCoins(sdk.NewInt64Coin(devnet.BondDenom, s.amount)))
		if err != nil {
			t.Fatal(err)
		}
	}
	valoper := n.Validators()[0]
	delHash, delHeight, err := n.Delegate(ctx, "user0", valoper, sdk.NewInt64Coin(devnet.BondDenom, 1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	until := delHeight + 1

	cfg := config.Chain{ID: n.ChainID(), Kind: "cosmos", RPC: []string{n.RPCURL()}, BatchSize: 10, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: "cosmos", StartHeight: 1}
	client, err := cometbft.New(cfg.RPC, cometbft.Retry{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	if err := n.WaitForHeight(ctx, until); err != nil {
		t.Fatal(err)
	}
	if err := x.Run(ctx, until); err != nil {
		t.Fatal(err)
	}

	for _, s := range sends {
		var got struct {
			Sender    string `bun:"sender"`
			Recipient string `bun:"recipient"`
			Amount    string `bun:"amount"`
			Denom     string `bun:"denom"`
		}
		// The message's transfer (msg_index 0), not the fee payment (no msg_index).
		err := db.NewRaw(`SELECT tr.sender, tr.recipient, tr.amount::text AS amount, tr.denom FROM transfers tr
			JOIN txs ON txs.chain_id = tr.chain_id AND txs.height = tr.height AND txs.tx_index = tr.tx_index
			WHERE txs.hash = ? AND tr.kind = 'transfer' AND tr.msg_index = 0`, s.hash).Scan(ctx, &got)
		if err != nil {
			t.Fatalf("transfer %s: %v", s.hash, err)
		}
		if got.Sender != addr[s.from] || got.Recipient != addr[s.to] || got.Amount != sdkmath.NewInt(s.amount).String() || got.Denom != devnet.BondDenom {
			t.Errorf("tx %s: indexed %+v, want %s -> %s %d%s", s.hash, got, addr[s.from], addr[s.to], s.amount, devnet.BondDenom)
		}
		if h := count(t, db, "SELECT height FROM txs WHERE hash = ?", s.hash); h != s.height {
			t.Errorf("tx %s at height %d, want %d", s.hash, h, s.height)
		}
	}
	var del struct {
		Delegator string `bun:"delegator"`
		Validator string `bun:"validator"`
		Amount    string `bun:"amount"`
	}
	if err := db.NewRaw(`SELECT s.delegator, s.validator, s.amount::text AS amount FROM staking_events s
		JOIN txs ON txs.chain_id = s.chain_id AND txs.height = s.height AND txs.tx_index = s.tx_index
		WHERE txs.hash = ? AND s.kind = 'delegate'`, delHash).Scan(ctx, &del); err != nil {
		t.Fatal(err)
	}
	if del.Delegator != addr["user0"] || del.Validator != valoper || del.Amount != "1000000" {
		t.Errorf("delegation %+v", del)
	}

	// Every block from height 2 carries its predecessor's commit: the one
	// validator signed each, with its voting power from the node's set.
	vals, err := client.Validators(ctx, until)
	if err != nil || len(vals) != 1 {
		t.Fatalf("validators %+v, %v", vals, err)
	}
	var votes []struct {
		Height    int64  `bun:"height"`
		Validator string `bun:"validator"`
		Power     *int64 `bun:"power"`
		Flag      int    `bun:"flag"`
	}
	if err := db.NewRaw("SELECT height, validator, power, flag FROM commit_signatures WHERE chain_id = ? ORDER BY height", cfg.ID).Scan(ctx, &votes); err != nil {
		t.Fatal(err)
	}
	if len(votes) != int(until)-1 {
		t.Fatalf("%d votes through height %d, want %d", len(votes), until, until-1)
	}
	for i, v := range votes {
		if v.Height != int64(i)+2 || v.Validator != vals[0].Address || v.Power == nil || *v.Power != vals[0].Power || v.Flag != 2 {
			t.Errorf("vote %+v (power %v), want height %d by %+v", v, v.Power, i+2, vals[0])
		}
	}

	// The node serves its descriptors (cosmos.reflection.v1): the indexer
	// stored them under the app version, and they alone decode the chain's
	// messages as the shipped sets do.
	versions, err := descriptors.Versions(ctx, db, cfg.ID)
	if err != nil || len(versions) != 1 || versions[0].Files < 100 || versions[0].FirstHeight < 1 {
		t.Fatalf("stored node descriptors %+v, %v", versions, err)
	}
	stored, err := descriptors.Load(ctx, db, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	nodeOnly, err := protoset.New(stored[0].Set)
	if err != nil {
		t.Fatal(err)
	}
	var body string
	if err := db.NewRaw(`SELECT m.body::text FROM messages m JOIN txs ON txs.chain_id = m.chain_id AND txs.height = m.height AND txs.tx_index = m.tx_index
		WHERE txs.hash = ? AND m.msg_index = 0`, delHash).Scan(ctx, &body); err != nil {
		t.Fatal(err)
	}
	delMsg, err := (&stakingtypes.MsgDelegate{DelegatorAddress: addr["user0"], ValidatorAddress: valoper, Amount: sdk.NewInt64Coin(devnet.BondDenom, 1_000_000)}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	fromNode, complete, err := nodeOnly.Decode("/cosmos.staking.v1beta1.MsgDelegate", delMsg)
	if err != nil || !complete {
		t.Fatalf("node descriptors: %v", err)
	}
	var same bool
	if err := db.NewRaw("SELECT ?::jsonb = ?::jsonb", string(fromNode), body).Scan(ctx, &same); err != nil || !same {
		t.Errorf("node descriptors decode %s; stored body %s (%v)", fromNode, body, err)
	}

	// Every balance is the genesis rows plus the indexed changes: the users',
	// the validator's (its gentx self-delegation moved in InitChain) and the
	// bonded pool's.
	bonded, err := cosmos.ModuleAddress("cosmos", "bonded_tokens_pool")
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{addr["user0"], addr["user1"], addr["user2"], addr["node0"], bonded} {
		var net string
		if err := db.NewRaw(`SELECT coalesce(sum(delta), 0)::text FROM balance_changes WHERE address = ? AND chain_id = ? AND denom = ? AND height <= ?`,
			who, n.ChainID(), devnet.BondDenom, until).Scan(ctx, &net); err != nil {
			t.Fatal(err)
		}
		want, ok := sdkmath.NewIntFromString(net)
		if !ok {
			t.Fatalf("net %q", net)
		}
		got := bankBalance(t, ctx, client, who, until)
		if !got.Equal(want) {
			t.Errorf("%s: chain balance %s at %d, indexed genesis + changes %s", who, got, until, want)
		}
	}

	// Following at the tip with a one-minute poll interval, the new block
	// hint (websocket headers) has a new transaction indexed within seconds.
	follow := cfg
	follow.PollInterval = config.Duration(time.Minute)
	follow.NewBlockHint = true
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	fx := indexer.NewCosmos(follow, db, indexer.NewClientSource(client), cosmos.NewAdapter(follow.Kind, follow.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	go func() { done <- fx.Run(fctx, 0) }()
	time.Sleep(2 * time.Second) // caught up, waiting at the tip
	hintHash, _, err := n.Send(ctx, "user2", addr["user0"], sdk.NewCoins(sdk.NewInt64Coin(devnet.BondDenom, 9)))
	if err != nil {
		t.Fatal(err)
	}
	sentAt := time.Now()
	for count(t, db, "SELECT count(*) FROM txs WHERE hash = ?", hintHash) == 0 && time.Since(sentAt) < 20*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("follower: %v", err)
	}
	if count(t, db, "SELECT count(*) FROM txs WHERE hash = ?", hintHash) != 1 {
		t.Errorf("tx %s not indexed 20 s after it was sent, with a 1 min poll interval: the new block hint did not wake the indexer", hintHash)
	}
	if c := count(t, db, "SELECT count(*) FROM genesis_imports WHERE chain_id = ? AND initial_height = 1", n.ChainID()); c != 1 {
		t.Errorf("%d genesis imports", c)
	}
}

func bankBalance(t *testing.T, ctx context.Context, c *cometbft.Client, address string, height int64) sdkmath.Int {
	t.Helper()
	b, err := devnet.BankBalance(ctx, c, address, devnet.BondDenom, height)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
