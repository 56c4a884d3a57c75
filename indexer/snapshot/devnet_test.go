package snapshot_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainlens/chainlens/store/snapshots"

	sdkmath "cosmossdk.io/math"
	sdk "github.com/cosmos/cosmos-sdk/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	distrtypes "github.com/cosmos/cosmos-sdk/x/distribution/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/devnet"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/indexer/snapshot"
	"github.com/chainlens/chainlens/internal/testdb"
)

// One devnet per process (testutil/network): the tests share it.
var (
	netOnce sync.Once
	theNet  *devnet.Net
	netErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if theNet != nil {
		_ = theNet.Close()
	}
	os.Exit(code)
}

func startNet(t *testing.T) (*devnet.Net, *cometbft.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an in-process chain")
	}
	netOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		theNet, netErr = devnet.Start(ctx, devnet.Options{BlockTime: 100 * time.Millisecond})
	})
	if netErr != nil {
		t.Fatal(netErr)
	}
	c, err := cometbft.New([]string{theNet.RPCURL()}, cometbft.Retry{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return theNet, c
}

// abci runs one query at height with the client, independently of Take.
func abci(t *testing.T, ctx context.Context, c *cometbft.Client, path string, height int64, req, resp protoMsg) {
	t.Helper()
	data, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.ABCIQuery(ctx, path, data, height)
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
}

// genesisSupply sums the genesis bank balances per denom.
func genesisSupply(t *testing.T, ctx context.Context, c *cometbft.Client) map[string]string {
	t.Helper()
	raw, err := c.Call(ctx, "genesis", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Genesis struct {
			AppState struct {
				Bank struct {
					Balances []struct {
						Coins []struct {
							Denom  string `json:"denom"`
							Amount string `json:"amount"`
						} `json:"coins"`
					} `json:"balances"`
				} `json:"bank"`
			} `json:"app_state"`
		} `json:"genesis"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	sum := map[string]sdkmath.Int{}
	for _, b := range g.Genesis.AppState.Bank.Balances {
		for _, c := range b.Coins {
			a, ok := sdkmath.NewIntFromString(c.Amount)
			if !ok {
				t.Fatalf("genesis amount %q", c.Amount)
			}
			if _, seen := sum[c.Denom]; !seen {
				sum[c.Denom] = sdkmath.ZeroInt()
			}
			sum[c.Denom] = sum[c.Denom].Add(a)
		}
	}
	out := map[string]string{}
	for d, a := range sum {
		out[d] = a.String()
	}
	return out
}

func blockTime(t *testing.T, ctx context.Context, c *cometbft.Client, h int64) time.Time {
	t.Helper()
	raw, err := c.Block(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		Block struct {
			Header struct {
				Time time.Time `json:"time"`
			} `json:"header"`
		} `json:"block"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	return b.Block.Header.Time
}

// byKind indexes rows by kind, then key, then denom: the amount.
func byKind(rows []snapshots.Row) map[string]map[string]map[string]string {
	out := map[string]map[string]map[string]string{}
	for _, r := range rows {
		if out[r.Kind] == nil {
			out[r.Kind] = map[string]map[string]string{}
		}
		if out[r.Kind][r.Key] == nil {
			out[r.Kind][r.Key] = map[string]string{}
		}
		out[r.Kind][r.Key][r.Denom] = r.Amount
	}
	return out
}

func mustInt(t *testing.T, s string) sdkmath.Int {
	t.Helper()
	i, ok := sdkmath.NewIntFromString(s)
	if !ok {
		t.Fatalf("not an integer: %q", s)
	}
	return i
}

// Genesis of the devnet (testutil/network defaults at the pinned
// cosmos-sdk): node0 holds 500000000stake and 1000000000node0token and
// bonds 100000000stake; the three users hold UserFunds each.
const (
	wantStakeSupply = "3500000000" // 500000000 + 3 × 1000000000
	wantGenesisBond = 100_000_000
	delegated       = 1_000_000
)

// delegatedSoFar is what the tests delegated on the shared devnet (-count > 1 repeats them).
var delegatedSoFar int64

// feeTxs counts the transactions the tests sent on the shared devnet, each
// paying devnet.TxFee (the community pool and distribution hold a share).
var feeTxs atomic.Int64

// TestTakeAndStoreOnDevnet snapshots a real chain after a delegation and
// checks every kind against the genesis and independent queries, then
// stores it twice.
func TestTakeAndStoreOnDevnet(t *testing.T) {
	t.Parallel()
	n, c := startNet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	valoper := n.Validators()[0]
	_, delHeight, err := n.Delegate(ctx, "user1", valoper, sdk.NewInt64Coin(devnet.BondDenom, delegated))
	if err != nil {
		t.Fatal(err)
	}
	delegatedSoFar += delegated
	feeTxs.Add(1)
	// The next block's BeginBlock moves the delegation's fee from the fee
	// collector to distribution (validator rewards and the community pool).
	h := delHeight + 1
	// Block h+1 exists only once the app has committed h: querying state at
	// h before that answers "height in the future".
	if err := n.WaitForHeight(ctx, h+1); err != nil {
		t.Fatal(err)
	}
	var user1 string
	for _, a := range n.Accounts() {
		if a.Name == "user1" {
			user1 = a.Address
		}
	}
	rows, err := snapshot.Take(ctx, c, n.ChainID(), h, n.Bech32Prefix(), snapshot.DefaultModules, []string{user1, user1})
	if err != nil {
		t.Fatal(err)
	}
	// Delegation: user1's one delegation, as the staking query gives it.
	var del stakingtypes.QueryDelegationResponse
	abci(t, ctx, c, "/cosmos.staking.v1beta1.Query/Delegation", h, &stakingtypes.QueryDelegationRequest{DelegatorAddr: user1, ValidatorAddr: valoper}, &del)
	if got := byKind(rows)["delegation"]; len(got) != 1 || got[user1+"/"+valoper][devnet.BondDenom] != del.DelegationResponse.Balance.Amount.String() ||
		del.DelegationResponse.Balance.Amount.Int64() != delegatedSoFar {
		t.Errorf("delegation rows %v, staking query %s, delegated %d", got, del.DelegationResponse.Balance, delegatedSoFar)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		t.Logf("height %d: %s %q %s %s %s", h, r.Kind, r.Key, r.Denom, r.Amount, r.Data)
	}
	k := byKind(rows)

	// Supply: exactly the genesis balances (no mint, nothing burnt), and the same as at height 1.
	gen := genesisSupply(t, ctx, c)
	if gen[devnet.BondDenom] != wantStakeSupply {
		t.Errorf("genesis stake supply %s, want %s", gen[devnet.BondDenom], wantStakeSupply)
	}
	if !reflect.DeepEqual(k["supply"][""], gen) {
		t.Errorf("supply %v, want the genesis sum %v", k["supply"][""], gen)
	}
	rows1, err := snapshot.Take(ctx, c, n.ChainID(), 1, n.Bech32Prefix(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s1 := byKind(rows1)["supply"][""]; !reflect.DeepEqual(s1, k["supply"][""]) {
		t.Errorf("supply at 1 %v, at %d %v", s1, h, k["supply"][""])
	}

	// Validator: the row equals the staking query, and the delegation added exactly its amount.
	var val, before stakingtypes.QueryValidatorResponse
	abci(t, ctx, c, "/cosmos.staking.v1beta1.Query/Validator", h, &stakingtypes.QueryValidatorRequest{ValidatorAddr: valoper}, &val)
	abci(t, ctx, c, "/cosmos.staking.v1beta1.Query/Validator", delHeight-1, &stakingtypes.QueryValidatorRequest{ValidatorAddr: valoper}, &before)
	if len(k["validator"]) != 1 {
		t.Fatalf("validator rows %v, want one", k["validator"])
	}
	if got := k["validator"][valoper][devnet.BondDenom]; got != val.Validator.Tokens.String() {
		t.Errorf("validator tokens %s, staking query %s", got, val.Validator.Tokens)
	}
	if want := before.Validator.Tokens.AddRaw(delegated); !val.Validator.Tokens.Equal(want) {
		t.Errorf("tokens %s after delegating %d, %s before", val.Validator.Tokens, delegated, before.Validator.Tokens)
	}
	var vdata struct {
		Moniker, Status, CommissionRate, DelegatorShares string
		Jailed                                           bool
	}
	for _, r := range rows {
		if r.Kind == "validator" {
			var d map[string]any
			if err := json.Unmarshal(r.Data, &d); err != nil {
				t.Fatal(err)
			}
			vdata.Moniker, _ = d["moniker"].(string)
			vdata.Status, _ = d["status"].(string)
			vdata.CommissionRate, _ = d["commission_rate"].(string)
			vdata.DelegatorShares, _ = d["delegator_shares"].(string)
			vdata.Jailed, _ = d["jailed"].(bool)
		}
	}
	v := val.Validator
	if vdata.Moniker != v.Description.Moniker || vdata.Status != "BOND_STATUS_BONDED" || vdata.Jailed ||
		vdata.CommissionRate != v.Commission.Rate.String() || vdata.DelegatorShares != v.DelegatorShares.String() {
		t.Errorf("validator data %+v, staking query %s %s %v %s %s", vdata, v.Description.Moniker, v.Status, v.Jailed, v.Commission.Rate, v.DelegatorShares)
	}

	// Staking pool: bonded = the (only, bonded) validator's tokens = genesis bond + delegations so far.
	bonded := mustInt(t, k["staking_pool"]["bonded"][devnet.BondDenom])
	if !bonded.Equal(v.Tokens) {
		t.Errorf("bonded pool %s, validator tokens %s", bonded, v.Tokens)
	}
	if k["staking_pool"]["not_bonded"][devnet.BondDenom] != "0" {
		t.Errorf("not bonded pool %q, want 0", k["staking_pool"]["not_bonded"][devnet.BondDenom])
	}
	if want := sdkmath.NewInt(wantGenesisBond + delegatedSoFar); !bonded.Equal(want) {
		t.Errorf("bonded pool %s, want genesis bond %d + delegations %d", bonded, wantGenesisBond, delegatedSoFar)
	}

	// Module balances at the §12 addresses; the bonded pool account holds the bonded tokens.
	wantAddr := map[string]string{
		"fee_collector":          "cosmos17xpfvakm2amg962yls6f84z3kell8c5lserqta",
		"distribution":           "cosmos1jv65s3grqf6v6jl3dp4t6c9t9rk99cd88lyufl",
		"bonded_tokens_pool":     "cosmos1fl48vsnmsdzcv85q5d2q4z5ajdha8yu34mf0eh",
		"not_bonded_tokens_pool": "cosmos1tygms3xhhs3yv487phx3dw4a95jn7t7lpm470r",
	}
	for _, r := range rows {
		if r.Kind != "module_balance" {
			continue
		}
		var d struct{ Address string }
		if err := json.Unmarshal(r.Data, &d); err != nil || d.Address != wantAddr[r.Key] {
			t.Errorf("module %s at %s (%v), want %s", r.Key, d.Address, err, wantAddr[r.Key])
		}
		var bal banktypes.QueryBalanceResponse
		abci(t, ctx, c, "/cosmos.bank.v1beta1.Query/Balance", h, &banktypes.QueryBalanceRequest{Address: d.Address, Denom: r.Denom}, &bal)
		if bal.Balance.Amount.String() != r.Amount {
			t.Errorf("module %s %s: %s, bank query %s", r.Key, r.Denom, r.Amount, bal.Balance.Amount)
		}
	}
	if got := k["module_balance"]["bonded_tokens_pool"][devnet.BondDenom]; got != bonded.String() {
		t.Errorf("bonded_tokens_pool balance %s, bonded pool %s", got, bonded)
	}

	// Mint: the devnet has no x/mint.
	if s := snapshot.Skipped(rows); !reflect.DeepEqual(s, []string{"mint"}) {
		t.Errorf("skipped %v, want [mint]", s)
	}
	if len(k["mint"]) != 0 {
		t.Errorf("mint rows %v", k["mint"])
	}

	// Community pool: present, equal to the distribution query (2% of the fees so far).
	var cp distrtypes.QueryCommunityPoolResponse
	abci(t, ctx, c, "/cosmos.distribution.v1beta1.Query/CommunityPool", h, &distrtypes.QueryCommunityPoolRequest{}, &cp)
	if len(cp.Pool) == 0 {
		t.Fatal("empty community pool")
	}
	// Each delegation paid devnet.TxFee; the community tax (2%) of it went to the pool.
	txs := feeTxs.Load()
	if want := sdkmath.LegacyNewDec(devnet.TxFee * txs / 50).String(); k["community_pool"][""][devnet.BondDenom] != want {
		t.Errorf("community pool %v, want %s%s", k["community_pool"][""], want, devnet.BondDenom)
	}
	if want := sdkmath.NewInt(devnet.TxFee * txs).String(); k["module_balance"]["distribution"][devnet.BondDenom] != want {
		t.Errorf("distribution account %v, want %s%s (the fees)", k["module_balance"]["distribution"], want, devnet.BondDenom)
	}
	wantCP := map[string]string{}
	for _, dc := range cp.Pool {
		wantCP[dc.Denom] = dc.Amount.String()
	}
	if !reflect.DeepEqual(k["community_pool"][""], wantCP) {
		t.Errorf("community pool %v, want %v", k["community_pool"][""], wantCP)
	}
	taken := map[string]bool{}
	for key := range k["taken"] {
		taken[key] = true
	}
	if want := map[string]bool{"supply": true, "module_balance": true, "staking_pool": true, "validator": true, "delegation": true, "community_pool": true}; !reflect.DeepEqual(taken, want) {
		t.Errorf("taken kinds %v, want %v", taken, want)
	}

	// snapshots.Store twice: the same rows.
	db, _ := testdb.New(t)
	bt := blockTime(t, ctx, c, h)
	var btDB time.Time // as Postgres stores it (microseconds)
	if err := db.NewRaw("SELECT ?::timestamptz", bt.UTC().Format("2006-01-02 15:04:05.999999999Z07:00")).Scan(ctx, &btDB); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.Store(ctx, db, n.ChainID(), h, bt, rows); err != nil {
		t.Fatal(err)
	}
	first, err := snapshots.Rows(ctx, db, n.ChainID(), h, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshots.Store(ctx, db, n.ChainID(), h, bt, rows); err != nil {
		t.Fatal(err)
	}
	second, err := snapshots.Rows(ctx, db, n.ChainID(), h, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(rows) || !reflect.DeepEqual(first, second) {
		t.Errorf("stored %d rows then %d (%d taken); equal: %v", len(first), len(second), len(rows), reflect.DeepEqual(first, second))
	}
	stored := byKind(first)
	if !reflect.DeepEqual(stored["supply"], k["supply"]) || !reflect.DeepEqual(stored["community_pool"], k["community_pool"]) ||
		!reflect.DeepEqual(stored["validator"], k["validator"]) || !reflect.DeepEqual(stored["staking_pool"], k["staking_pool"]) {
		t.Errorf("stored amounts differ from taken ones:\n%v\n%v", stored, k)
	}
	var storedTime time.Time
	if err := db.NewRaw("SELECT DISTINCT time FROM state_snapshots WHERE chain_id = ? AND height = ?", n.ChainID(), h).Scan(ctx, &storedTime); err != nil || !storedTime.Equal(btDB) {
		t.Errorf("stored time %v (%v), block time %v", storedTime, err, bt)
	}
	// Storing inside a transaction works too (a savepoint).
	if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return snapshots.Store(ctx, tx, n.ChainID(), h, bt, rows)
	}); err != nil {
		t.Fatal(err)
	}

	// Latest at or before a time: the snapshot for taken kinds, none for mint or before it.
	s, err := snapshots.Latest(ctx, db, n.ChainID(), "validator", bt.Add(time.Hour))
	if err != nil || s.Height != h || !s.Time.Equal(btDB) || len(s.Rows) != 1 || s.Rows[0].Amount != v.Tokens.String() {
		t.Errorf("Latest validator = %+v, %v", s, err)
	}
	if s, err := snapshots.Latest(ctx, db, n.ChainID(), "staking_pool", btDB); err != nil || s.Height != h || len(s.Rows) != 2 {
		t.Errorf("Latest staking_pool at the block time = %+v, %v", s, err)
	}
	if _, err := snapshots.Latest(ctx, db, n.ChainID(), "mint", bt.Add(time.Hour)); !errors.Is(err, snapshots.ErrNoSnapshot) {
		t.Errorf("Latest mint: %v, want ErrNoSnapshot", err)
	}
	if _, err := snapshots.Latest(ctx, db, n.ChainID(), "supply", btDB.Add(-time.Microsecond)); !errors.Is(err, snapshots.ErrNoSnapshot) {
		t.Errorf("Latest supply before the snapshot: %v, want ErrNoSnapshot", err)
	}
}

// TestSnapshotterOnDevnet indexes the devnet and checks that snapshots
// exist exactly at multiples of SnapshotEvery, with their block times.
func TestSnapshotterOnDevnet(t *testing.T) {
	t.Parallel()
	n, client := startNet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, _ := testdb.New(t)
	const every = 5
	cfg := config.Chain{ID: n.ChainID(), Kind: "cosmos", RPC: []string{n.RPCURL()}, BatchSize: 10, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: n.Bech32Prefix(), StartHeight: 1, SnapshotEvery: every}
	m, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	s := snapshot.NewSnapshotter(db, client, cfg, slog.New(slog.NewTextHandler(t.Output(), nil)))

	indexUntil := func(h int64) {
		t.Helper()
		if err := n.WaitForHeight(ctx, h+1); err != nil { // state at h is queryable once h+1 exists
			t.Fatal(err)
		}
		if err := x.Run(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	poll := func(want ...int64) {
		t.Helper()
		got, err := s.Poll(ctx)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Poll = %v, %v; want %v", got, err, want)
		}
	}
	heights := func() []int64 {
		t.Helper()
		var hs []int64
		if err := db.NewRaw("SELECT DISTINCT height FROM state_snapshots WHERE chain_id = ? ORDER BY height", n.ChainID()).Scan(ctx, &hs); err != nil {
			t.Fatal(err)
		}
		return hs
	}

	// Nothing indexed yet: nothing to do.
	poll()
	// Indexed through 17 before the first poll: fell behind, only 15 (5 and 10 passed over).
	indexUntil(17)
	poll(15)
	poll()
	// Through 33 with room for three: 20, 25, 30 in order.
	indexUntil(33)
	s.MaxPending = 10
	poll(20, 25, 30)
	if hs := heights(); !reflect.DeepEqual(hs, []int64{15, 20, 25, 30}) {
		t.Fatalf("snapshot heights %v", hs)
	}

	// Live: the indexer follows the chain and Run snapshots every multiple.
	s.MaxPending = 1000
	tip, err := n.Height(ctx)
	if err != nil {
		t.Fatal(err)
	}
	target := (tip/every + 2) * every
	live, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs <- x.Run(live, 0) }()
	go func() { defer wg.Done(); errs <- s.Run(live) }()
	for {
		last, err := snapshots.LastHeight(ctx, db, n.ChainID())
		if err != nil {
			t.Fatal(err)
		}
		if last >= target {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no snapshot at %d (last %d)", target, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	hs := heights()
	want := []int64{15}
	for h := int64(20); h <= hs[len(hs)-1]; h += every {
		want = append(want, h)
	}
	if !reflect.DeepEqual(hs, want) || hs[len(hs)-1] < target {
		t.Fatalf("snapshot heights %v, want %v (through at least %d)", hs, want, target)
	}
	t.Logf("snapshots at %v", hs)

	// Every snapshot has its block's time, the constant stake supply, and mint skipped.
	var bad int
	if err := db.NewRaw(`SELECT count(*) FROM (SELECT DISTINCT s.height FROM state_snapshots s
		LEFT JOIN blocks b ON b.chain_id = s.chain_id AND b.height = s.height
		WHERE s.chain_id = ? AND (b.time IS NULL OR b.time <> s.time)) x`, n.ChainID()).Scan(ctx, &bad); err != nil || bad != 0 {
		t.Errorf("%d snapshots without their block time (%v)", bad, err)
	}
	var supplies []string
	if err := db.NewRaw(`SELECT amount::text FROM state_snapshots WHERE chain_id = ? AND kind = 'supply' AND denom = ? ORDER BY height`,
		n.ChainID(), devnet.BondDenom).Scan(ctx, &supplies); err != nil {
		t.Fatal(err)
	}
	if len(supplies) != len(hs) {
		t.Errorf("%d supply rows for %d snapshots", len(supplies), len(hs))
	}
	for i, a := range supplies {
		if a != wantStakeSupply {
			t.Errorf("stake supply at %d: %s, want %s", hs[i], a, wantStakeSupply)
		}
	}
	var skipped int
	if err := db.NewRaw(`SELECT count(*) FROM state_snapshots WHERE chain_id = ? AND kind = 'skipped' AND key = 'mint'`, n.ChainID()).Scan(ctx, &skipped); err != nil || skipped != len(hs) {
		t.Errorf("mint skipped in %d of %d snapshots (%v)", skipped, len(hs), err)
	}
	// Latest at the time of block 27 is the snapshot at 25.
	var t27 time.Time
	if err := db.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height = 27", n.ChainID()).Scan(ctx, &t27); err != nil {
		t.Fatal(err)
	}
	if got, err := snapshots.Latest(ctx, db, n.ChainID(), "supply", t27); err != nil || got.Height != 25 {
		t.Errorf("Latest supply at block 27's time: %+v, %v; want height 25", got, err)
	}
}
