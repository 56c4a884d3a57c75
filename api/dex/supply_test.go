package dex_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/store/snapshots"

	"github.com/chainlens/chainlens/api"

	sdkmath "cosmossdk.io/math"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	distrtypes "github.com/cosmos/cosmos-sdk/x/distribution/types"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/devnet"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/indexer/snapshot"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/devnettest"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestSupplyOnDevnet indexes the in-process devnet as the dex chain with a
// state snapshot every 5 heights, runs the jobs and checks /supply/v1/metrics
// against the node's own answers at the indexed tip, queried independently:
// total = bank SupplyOf(stake) at the tip (the snapshot at 10 plus what was
// minted and burnt after it: nothing, the devnet has no x/mint and burns
// nothing), circulating = that − the community pool of the snapshot
// (distribution CommunityPool at 10, truncated), burnt = 0.
func TestSupplyOnDevnet(t *testing.T) {
	t.Parallel()
	n, ctx, _ := devnettest.Start(t, 3*time.Minute)
	client, err := cometbft.New([]string{n.RPCURL()}, cometbft.Retry{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := testdb.New(t)
	ch := config.Chain{ID: n.ChainID(), Kind: osmosis.Kind, RPC: []string{n.RPCURL()}, BatchSize: 10, Concurrency: 2,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: n.Bech32Prefix(), StartHeight: 1, SnapshotEvery: 5,
		StakingDenom: devnet.BondDenom,
		Assets:       []config.Asset{{Denom: devnet.BondDenom, Symbol: "STAKE", Name: "Stake", Display: "stake", Exponent: 6}}}
	cfg := &config.Config{Chains: []config.Chain{ch}}

	const tip = 13
	if err := n.WaitForHeight(ctx, tip+1); err != nil { // state at tip is queryable once tip+1 exists
		t.Fatal(err)
	}
	m, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(ch, db, indexer.NewClientSource(client), osmosis.NewAdapter(ch.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	if err := x.Run(ctx, tip); err != nil {
		t.Fatal(err)
	}
	if got, err := snapshot.NewSnapshotter(db, client, ch, slog.New(slog.DiscardHandler)).Poll(ctx); err != nil || len(got) == 0 || got[len(got)-1] != 10 {
		t.Fatalf("snapshots %v, %v; want the last at 10", got, err)
	}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}

	abci := func(path string, height int64, req interface{ Marshal() ([]byte, error) }, resp interface{ Unmarshal([]byte) error }) {
		t.Helper()
		data, err := req.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := client.ABCIQuery(ctx, path, data, height)
		if err != nil {
			t.Fatal(err)
		}
		if err := resp.Unmarshal(raw); err != nil {
			t.Fatal(err)
		}
	}
	var supply banktypes.QuerySupplyOfResponse
	abci("/cosmos.bank.v1beta1.Query/SupplyOf", tip, &banktypes.QuerySupplyOfRequest{Denom: devnet.BondDenom}, &supply)
	var pool distrtypes.QueryCommunityPoolResponse
	abci("/cosmos.distribution.v1beta1.Query/CommunityPool", 10, &distrtypes.QueryCommunityPoolRequest{}, &pool)
	community := pool.Pool.AmountOf(devnet.BondDenom).TruncateInt()
	var blockTime time.Time
	if err := db.NewRaw("SELECT time FROM blocks WHERE height = ?", tip).Scan(ctx, &blockTime); err != nil {
		t.Fatal(err)
	}
	if !supply.Amount.Amount.IsPositive() {
		t.Fatalf("node supply %s, community pool %s", supply.Amount, community)
	}
	display := func(i sdkmath.Int) string {
		return string(api.Number(sdkmath.LegacyNewDecFromInt(i).QuoInt64(1_000_000).String()))
	}
	last := blockTime.UTC().Format(time.RFC3339)
	total, circulating := display(supply.Amount.Amount), display(supply.Amount.Amount.Sub(community))

	s := serve(t, db, cfg.Chains, time.Now())
	for _, c := range []struct{ path, body string }{
		{"/supply/v1/metrics", fmt.Sprintf(`{"lastUpdate":%q,"totalSupply":%s,"burntSupply":0,"circulatingSupply":%s}`, last, total, circulating)},
		{"/supply/v1/metrics?metric=totalSupply", fmt.Sprintf(`{"lastUpdate":%q,"totalSupply":%s}`, last, total)},
		{"/supply/v1/metrics?metric=circulatingSupply", fmt.Sprintf(`{"lastUpdate":%q,"circulatingSupply":%s}`, last, circulating)},
		{"/supply/v1/metrics?metric=burntSupply", fmt.Sprintf(`{"lastUpdate":%q,"burntSupply":0}`, last)},
	} {
		resp, body := s.get(t, c.path)
		if resp.StatusCode != 200 || body != c.body {
			t.Errorf("%s: %d\n got %s\nwant %s", c.path, resp.StatusCode, body, c.body)
			continue
		}
		validateAgainstOpenAPI(t, s, c.path, resp, body)
	}
	if resp, body := s.get(t, "/supply/v1/metrics?metric=maxSupply"); resp.StatusCode != 400 {
		t.Errorf("unknown metric: %d %s", resp.StatusCode, body)
	}
}

// TestSupplyOnLocalnet checks the mint and burn arithmetic on the recorded
// Osmosis localnet, which the replay node cannot snapshot: the state at
// genesis (the sum of genesis.json's bank balances per denom, an empty
// community pool) is stored as the snapshot at height 0, and the node's
// community pool at 299 (truth/community_pool.json) as a snapshot at 299.
// The total at 299 = genesis uosmo 49100406638429 + minted − burnt over
// heights 1..299 (without the superfluid module's synthetic mints and burns,
// 1344008432 and 633806511, with the developer vesting account's three
// releases of 1250000000) must equal the node's own total supply at 299
// (truth/total_supply.json: 49113891428429 uosmo); circulating = that −
// 12400225698 (the community pool, truncated); burnt = the slashing burn
// of the bonded pool at 47 (1505210000) + the gov module's deposit burn at
// 54 (10000000), not the protorev, mint and superfluid modules' own burns.
func TestSupplyOnLocalnet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, ch := osmosistest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}}

	raw, err := os.ReadFile(filepath.Join(osmosistest.Dir(), "genesis.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Result struct {
			Genesis struct {
				Time     time.Time `json:"genesis_time"`
				AppState struct {
					Bank struct {
						Balances []struct {
							Coins []struct{ Denom, Amount string } `json:"coins"`
						} `json:"balances"`
					} `json:"bank"`
				} `json:"app_state"`
			} `json:"genesis"`
		} `json:"result"`
	}
	if err := json.NewDecoder(zr).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	g := reply.Result.Genesis
	sums := map[string]sdkmath.Int{}
	for _, b := range g.AppState.Bank.Balances {
		for _, c := range b.Coins {
			n, ok := sdkmath.NewIntFromString(c.Amount)
			if !ok {
				t.Fatalf("genesis amount %q", c.Amount)
			}
			if s, ok := sums[c.Denom]; ok {
				n = n.Add(s)
			}
			sums[c.Denom] = n
		}
	}
	if sums["uosmo"].String() != "49100406638429" {
		t.Fatalf("genesis uosmo %s", sums["uosmo"])
	}
	genesis := []snapshots.Row{{Kind: snapshots.KindTaken, Key: snapshots.KindSupply, Data: json.RawMessage(fmt.Sprintf(`{"rows": %d}`, len(sums)))},
		{Kind: snapshots.KindTaken, Key: snapshots.KindCommunityPool, Data: json.RawMessage(`{"rows": 0}`)}}
	for d, n := range sums {
		genesis = append(genesis, snapshots.Row{Kind: snapshots.KindSupply, Denom: d, Amount: n.String()})
	}
	if err := snapshots.Store(ctx, db, ch.ID, 0, g.Time, genesis); err != nil {
		t.Fatal(err)
	}
	var blockTime time.Time
	if err := db.NewRaw("SELECT time FROM blocks WHERE height = 299").Scan(ctx, &blockTime); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.Store(ctx, db, ch.ID, 299, blockTime, []snapshots.Row{
		{Kind: snapshots.KindTaken, Key: snapshots.KindCommunityPool, Data: json.RawMessage(`{"rows": 1}`)},
		{Kind: snapshots.KindCommunityPool, Denom: "uosmo", Amount: "12400225698.104153832769016256"}}); err != nil {
		t.Fatal(err)
	}
	runJobs(t, db, cfg)
	s := serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))
	resp, body := s.get(t, "/supply/v1/metrics")
	var got struct {
		LastUpdate        string      `json:"lastUpdate"`
		TotalSupply       json.Number `json:"totalSupply"`
		BurntSupply       json.Number `json:"burntSupply"`
		CirculatingSupply json.Number `json:"circulatingSupply"`
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.LastUpdate != "2026-11-21T21:32:53Z" || got.TotalSupply != "49113891.428429" || got.CirculatingSupply != "49101491.202731" {
		t.Errorf("supply %s", body)
	}
	if got.BurntSupply != "1515.21" {
		t.Errorf("burnt %s, want 1515.21", got.BurntSupply)
	}
	validateAgainstOpenAPI(t, s, "/supply/v1/metrics", resp, body)

	// Assets in chain on 2026-11-21: the node's total supply at 299 of
	// every priced denom (truth/total_supply.json, which the same supply
	// arithmetic must reproduce per denom) at the 21:00 closes: uatom
	// 7468476785243 × 17.145233255422220063, uion 4294127342694 ×
	// 4.153327807957258175, uosmo 49113891428429 × 1.81103865829427774,
	// uusdc 5830619660998 × 1, uweth 5551602033970 × 1.281698821270455963
	// (each / 10^6, rounded to 18 places); the LP shares and the
	// tokenfactory denom have no price.
	for _, c := range []struct{ path, body string }{
		{"/tokenomics/assets_in_chain?start_date=2026-11-21&end_date=2026-11-21", `[{"labels":"2026-11-21 00:00:00","assets_in_chain_usdc":247776952.529270613594192768}]`},
		{"/tokenomics/assets_in_chain?start_date=2026-11-20&end_date=2026-11-20", "[]"},
		{"/tokenomics/assets_in_chain?start_date=2026-11-22&end_date=2026-11-21", "start_date"},
	} {
		resp, body := s.get(t, c.path)
		if strings.HasPrefix(c.body, "[") {
			if resp.StatusCode != 200 || body != c.body {
				t.Errorf("%s: %d\n got %s\nwant %s", c.path, resp.StatusCode, body, c.body)
				continue
			}
			validateAgainstOpenAPI(t, s, c.path, resp, body)
		} else if resp.StatusCode != 400 || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, body)
		}
	}
}
