package perp_test

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"testing"
	"time"

	sdk "github.com/cosmos/cosmos-sdk/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	govv1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1"

	sdkmath "cosmossdk.io/math"

	"github.com/chainlens/chainlens/chains/dydx"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/devnet"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/devnettest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestCommunityPoolUsageOnDevnet runs a real governance proposal on the
// in-process chain (indexed as the perp chain): user0 funds the community
// pool, proposes to pay 1,200 stake to user1 and to user2, the validator
// votes yes and the proposal executes when the vote ends. The endpoint lists
// it once, at the height the node's own bank balances show the payments;
// a proposal the validator rejects is not listed.
func TestCommunityPoolUsageOnDevnet(t *testing.T) {
	t.Parallel()
	n, ctx, addr := devnettest.Start(t, 3*time.Minute)
	client, err := cometbft.New([]string{n.RPCURL()}, cometbft.Retry{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	node0, user0, user1, user2 := addr["node0"], addr["user0"], addr["user1"], addr["user2"]
	stake := func(v int64) sdk.Coins { return sdk.NewCoins(sdk.NewCoin(devnet.BondDenom, sdkmath.NewInt(v))) }
	if _, _, err := n.FundCommunityPool(ctx, user0, stake(5000)); err != nil {
		t.Fatal(err)
	}
	passed, _, _, err := n.ProposeCommunityPoolSpend(ctx, user0, stake(1200), user1, user2)
	if err != nil {
		t.Fatal(err)
	}
	rejected, _, _, err := n.ProposeCommunityPoolSpend(ctx, user0, stake(700), user1)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.Vote(ctx, node0, passed, govv1.OptionYes); err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.Vote(ctx, node0, rejected, govv1.OptionNo); err != nil {
		t.Fatal(err)
	}
	// Wait for both votes to end, then index through the next block.
	status := func(id uint64) govv1.ProposalStatus {
		req, _ := (&govv1.QueryProposalRequest{ProposalId: id}).Marshal()
		raw, err := client.ABCIQuery(ctx, "/cosmos.gov.v1.Query/Proposal", req, 0)
		if err != nil {
			t.Fatal(err)
		}
		var res govv1.QueryProposalResponse
		if err := res.Unmarshal(raw); err != nil {
			t.Fatal(err)
		}
		return res.Proposal.Status
	}
	for status(passed) == govv1.StatusVotingPeriod || status(rejected) == govv1.StatusVotingPeriod {
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	if s, r := status(passed), status(rejected); s != govv1.StatusPassed || r != govv1.StatusRejected {
		t.Fatalf("proposals %d %s and %d %s", passed, s, rejected, r)
	}
	st, err := client.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tip := st.LatestHeight

	db, _ := testdb.New(t)
	ch := config.Chain{ID: n.ChainID(), Kind: dydx.Kind, RPC: []string{n.RPCURL()}, BatchSize: 20, Concurrency: 2,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: n.Bech32Prefix(), StartHeight: 1}
	cfg := &config.Config{Chains: []config.Chain{ch}}
	m, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(ch, db, indexer.NewClientSource(client), dydx.NewAdapter(ch.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	if err := x.Run(ctx, tip); err != nil {
		t.Fatal(err)
	}
	apitest.RunJobs(t, db, cfg)

	// The node's balances: user1 received 1,200 stake from the pool at the
	// height the proposal passed, not before.
	balance := func(addr string, h int64) sdkmath.Int {
		req, _ := (&banktypes.QueryBalanceRequest{Address: addr, Denom: devnet.BondDenom}).Marshal()
		raw, err := client.ABCIQuery(ctx, "/cosmos.bank.v1beta1.Query/Balance", req, h)
		if err != nil {
			t.Fatal(err)
		}
		var res banktypes.QueryBalanceResponse
		if err := res.Unmarshal(raw); err != nil {
			t.Fatal(err)
		}
		return res.Balance.Amount
	}
	cfg.API = apitest.DefaultAPI(t, true)
	srv := apitest.Serve(t, db, cfg, time.Now())
	var got []map[string]any
	srv.GetJSON(t, "/governance/community_pool_usage", &got)
	if len(got) != 1 {
		t.Fatalf("%d rows: %v", len(got), got)
	}
	row := got[0]
	h, _ := row["block_height"].(json.Number).Int64()
	if d := balance(user1, h).Sub(balance(user1, h-1)); !d.Equal(sdkmath.NewInt(1200)) {
		t.Errorf("user1's balance changed by %s at %d, where the endpoint puts the spend", d, h)
	}
	var blockTime time.Time
	if err := db.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height = ?", ch.ID, h).Scan(ctx, &blockTime); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"proposal_id": json.Number(strconv.FormatUint(passed, 10)), "token_amount": json.Number("2400"), "token_symbol": "stake",
		"receivers_count": json.Number("2"), "block_timestamp": blockTime.UTC().Format(time.DateTime),
		"vote_yes": nil, "vote_no": nil, "vote_veto": nil, "vote_abstain": nil}
	for k, w := range want {
		if row[k] != w {
			t.Errorf("%s = %v, want %v", k, row[k], w)
		}
	}
}
