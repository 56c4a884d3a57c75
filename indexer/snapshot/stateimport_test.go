package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdk "github.com/cosmos/cosmos-sdk/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/devnet"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/snapshot"
	"github.com/chainlens/chainlens/internal/testdb"
)

// failingHolders is the real bank state with one injected failure: the
// holders page after the first fails once (a node that went away).
type failingHolders struct {
	indexer.BankState
	calls int
	err   error // errInjected when nil
}

var errInjected = errors.New("injected: the node went away")

func (f *failingHolders) Holders(ctx context.Context, height int64, denom string, key []byte) ([]indexer.Holding, []byte, error) {
	f.calls++
	if f.calls == 2 {
		if f.err != nil {
			return nil, nil, f.err
		}
		return nil, nil, errInjected
	}
	return f.BankState.Holders(ctx, height, denom, key)
}

// TestStateImportAtALaterStart: a chain indexed from a height after its
// initial one imports the node's bank balances at the height before,
// page by page, and every validator's delegations; a failure mid-import
// resumes at the next page; afterwards every account's balance and every
// validator's tokens (opening state plus indexed changes) equal the
// node's at a later height, and the import is recorded with its height.
func TestStateImportAtALaterStart(t *testing.T) {
	// Not parallel: its transfers are done before the parallel tests on
	// the shared devnet look at its fees (they count them: feeTxs).
	n, client := startNet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, _ := testdb.New(t)
	addr := map[string]string{}
	for _, a := range n.Accounts() {
		addr[a.Name] = a.Address
	}
	// A transfer before the start: the opening balances are not the genesis.
	_, before, err := n.Send(ctx, "user0", addr["user1"], sdk.NewCoins(sdk.NewInt64Coin(devnet.BondDenom, 4321)))
	if err != nil {
		t.Fatal(err)
	}
	feeTxs.Add(1)
	start := before + 2
	if err := n.WaitForHeight(ctx, start); err != nil {
		t.Fatal(err)
	}
	// And one after it, which the indexer records as a change.
	_, after, err := n.Send(ctx, "user1", addr["user2"], sdk.NewCoins(sdk.NewInt64Coin(devnet.BondDenom, 99)))
	if err != nil {
		t.Fatal(err)
	}
	feeTxs.Add(1)
	until := after + 1
	if err := n.WaitForHeight(ctx, until+1); err != nil {
		t.Fatal(err)
	}
	cfg := config.Chain{ID: n.ChainID(), Kind: "cosmos", RPC: []string{n.RPCURL()}, BatchSize: 10, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: n.Bech32Prefix(), StartHeight: start}
	m, _ := indexer.NewMetrics(nil)
	newIndexer := func(state indexer.BankState) *indexer.Cosmos {
		x := indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
		x.State = state
		return x
	}
	real := snapshot.BankState{Q: client, PageSize: 2}

	// The node goes away after the first page: the run fails, the page
	// stays staged, nothing is indexed.
	if err := newIndexer(&failingHolders{BankState: real}).Run(ctx, until); !errors.Is(err, errInjected) {
		t.Fatalf("run with a failing node: %v", err)
	}
	var staged, recorded, pending, pages int
	if err := db.NewRaw(`SELECT (SELECT count(*) FROM state_import_balances), (SELECT sum(rows) FROM state_import_progress),
		(SELECT count(*) FROM state_import_progress WHERE NOT done)`).Scan(ctx, &staged, &recorded, &pending); err != nil {
		t.Fatal(err)
	}
	if staged == 0 || staged > 2 || recorded != staged || pending == 0 {
		t.Fatalf("after the failure: %d staged, %d recorded, %d denoms pending; want the first page (1 or 2) recorded, the rest pending", staged, recorded, pending)
	}
	if err := db.NewRaw("SELECT count(*) FROM blocks WHERE chain_id = ?", n.ChainID()).Scan(ctx, &pages); err != nil || pages != 0 {
		t.Fatalf("blocks after the failure: %d (%v)", pages, err)
	}
	// The next run resumes at the second page and indexes.
	if err := newIndexer(real).Run(ctx, until); err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Initial int64 `bun:"initial_height"`
		State   int64 `bun:"state_height"`
		Rows    int64 `bun:"balance_rows"`
	}
	if err := db.NewRaw("SELECT initial_height, state_height, balance_rows FROM genesis_imports WHERE chain_id = ?", n.ChainID()).Scan(ctx, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Initial != start || rec.State != start-1 || rec.Rows < int64(len(addr)) {
		t.Fatalf("import record %+v; want initial %d, state %d, a row per account at least", rec, start, start-1)
	}
	if err := db.NewRaw("SELECT count(*) FROM state_import_balances").Scan(ctx, &staged); err != nil || staged != 0 {
		t.Fatalf("staging left: %d (%v)", staged, err)
	}
	// Delegations: each validator's tokens are the opening delegations plus
	// the indexed staking changes, as the node reports them.
	for _, valoper := range n.Validators() {
		var tokens string
		if err := db.NewRaw(`SELECT coalesce(sum(CASE kind WHEN 'delegate' THEN amount WHEN 'unbond' THEN -amount ELSE 0 END), 0)::text
			FROM staking_events WHERE chain_id = ? AND validator = ? AND height <= ?`, n.ChainID(), valoper, until).Scan(ctx, &tokens); err != nil {
			t.Fatal(err)
		}
		var val stakingtypes.QueryValidatorResponse
		abci(t, ctx, client, "/cosmos.staking.v1beta1.Query/Validator", until, &stakingtypes.QueryValidatorRequest{ValidatorAddr: valoper}, &val)
		if tokens == "0" || tokens != val.Validator.Tokens.String() {
			t.Errorf("validator %s: opening delegations + changes %s, the node's tokens at %d %s", valoper, tokens, until, val.Validator.Tokens)
		}
	}
	var opening int
	if err := db.NewRaw("SELECT count(*) FROM staking_events WHERE chain_id = ? AND height = 0 AND tx_index = -3 AND kind = 'delegate'", n.ChainID()).Scan(ctx, &opening); err != nil || opening == 0 {
		t.Fatalf("opening delegations: %d (%v)", opening, err)
	}
	bonded, err := cosmos.ModuleAddress(n.Bech32Prefix(), "bonded_tokens_pool")
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{addr["user0"], addr["user1"], addr["user2"], addr["node0"], bonded} {
		var net string
		if err := db.NewRaw(`SELECT coalesce(sum(delta), 0)::text FROM balance_changes WHERE chain_id = ? AND address = ? AND denom = ? AND height <= ?`,
			n.ChainID(), who, devnet.BondDenom, until).Scan(ctx, &net); err != nil {
			t.Fatal(err)
		}
		want, err := devnet.BankBalance(ctx, client, who, devnet.BondDenom, until)
		if err != nil {
			t.Fatal(err)
		}
		if net != want.String() {
			t.Errorf("%s: opening balance + changes %s, the node's balance at %d %s", who, net, until, want)
		}
	}
}

// TestStateImportOnAPrunedNode: a node that keeps no state at the height
// before the first indexed one makes the import say so and indexing go on
// without opening balances (no import recorded: balance endpoints answer
// 503 for the chain rather than guess).
func TestStateImportOnAPrunedNode(t *testing.T) {
	t.Parallel()
	n, client := startNet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, _ := testdb.New(t)
	tip, err := n.Height(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := tip + 1
	if err := n.WaitForHeight(ctx, start+3); err != nil {
		t.Fatal(err)
	}
	cfg := config.Chain{ID: n.ChainID(), Kind: "cosmos", RPC: []string{n.RPCURL()}, BatchSize: 10, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: n.Bech32Prefix(), StartHeight: start}
	m, _ := indexer.NewMetrics(nil)
	var logs strings.Builder
	x := indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.NewTextHandler(&logs, nil)), m)
	x.State = snapshot.BankState{Q: prunedBelow{q: client, below: start}}
	if err := x.Run(ctx, start+2); err != nil {
		t.Fatal(err)
	}
	var imports int
	if err := db.NewRaw("SELECT count(*) FROM genesis_imports").Scan(ctx, &imports); err != nil || imports != 0 {
		t.Fatalf("imports recorded: %d (%v), want none", imports, err)
	}
	// A node that stops serving the height mid-import (pruned meanwhile):
	// the pages staged so far go, nothing is imported, indexing goes on.
	db2, _ := testdb.New(t)
	y := indexer.NewCosmos(cfg, db2, indexer.NewClientSource(client), cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	y.State = &failingHolders{BankState: snapshot.BankState{Q: client, PageSize: 1}, err: fmt.Errorf("%w: pruned meanwhile", indexer.ErrStateUnavailable)}
	if err := y.Run(ctx, start+2); err != nil {
		t.Fatal(err)
	}
	var staged, imported int
	if err := db2.NewRaw("SELECT (SELECT count(*) FROM state_import_balances) + (SELECT count(*) FROM state_import_progress), (SELECT count(*) FROM genesis_imports)").
		Scan(ctx, &staged, &imported); err != nil || staged != 0 || imported != 0 {
		t.Fatalf("after a node pruned mid-import: %d staged rows, %d imports (%v); want none", staged, imported, err)
	}
	if want := "the node serves no bank state at the height before the first indexed one"; !strings.Contains(logs.String(), want) ||
		!strings.Contains(logs.String(), fmt.Sprintf("height=%d", start-1)) || !strings.Contains(logs.String(), "failed to load state") {
		t.Fatalf("the log does not say what is unavailable:\n%s", logs.String())
	}
}
