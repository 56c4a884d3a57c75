package perp_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
)

// TestBuyStakeMetrics takes bob of the dYdX localnet as the programme
// address: at the last hour its delegated and liquid NATIVE and its USDC
// equal the node's own delegation and bank queries at the last height.
func TestBuyStakeMetrics(t *testing.T) {
	t.Parallel()
	const bob = "dydx10fx7sy6ywd5senxae9dwytf8jxek3t2gcen2vs"
	db, ch := dydxtest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}, Perp: config.Perp{BuyStakeAddress: bob}}
	// A deposit into the programme: 42.5 USDC from carl at height 100 (bob
	// received no USDC from another account in the recording; its
	// withdrawal of 1,000 USDC from its own subaccount is no deposit).
	if _, err := db.ExecContext(t.Context(), `INSERT INTO transfers
		(chain_id, height, tx_index, event_index, coin_index, msg_index, kind, sender, recipient, denom, amount)
		SELECT ?, 100, 900, 0, 0, 0, 'transfer', 'dydx1carl', ?, quote_denom, 42500000 FROM dydx_native_token WHERE chain_id = ?`,
		ch.ID, bob, ch.ID); err != nil {
		t.Fatal(err)
	}
	apitest.RunJobs(t, db, cfg)
	var tip time.Time
	if err := db.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height = ?", ch.ID, dydxtest.LastHeight).Scan(t.Context(), &tip); err != nil {
		t.Fatal(err)
	}
	cfg.API = apitest.DefaultAPI(t, true)
	srv := apitest.Serve(t, db, cfg, tip.Add(time.Hour))

	var delegations struct {
		Responses []struct {
			Balance struct{ Amount string } `json:"balance"`
		} `json:"delegation_responses"`
	}
	dydxtest.Truth(t, "delegations_bob.json", &delegations)
	var bank struct {
		Balances map[string][]struct{ Denom, Amount string } `json:"balances"`
	}
	dydxtest.Truth(t, "bank_balances.json", &bank)
	staked := new(big.Rat)
	for _, d := range delegations.Responses {
		v, _ := new(big.Rat).SetString(d.Balance.Amount)
		staked.Add(staked, v)
	}
	want := map[string]*big.Rat{"stakingBalance": staked.Quo(staked, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)))}
	for _, c := range bank.Balances[bob] {
		v, _ := new(big.Rat).SetString(c.Amount)
		switch c.Denom {
		case "adv4tnt":
			want["liquidBalanceNATIVE"] = v.Quo(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)))
		default:
			want["liquidBalanceUSDC"] = v.Quo(v, big.NewRat(1_000_000, 1))
		}
	}
	if len(want) != 3 || want["stakingBalance"].Sign() == 0 {
		t.Fatalf("truth: %v", want)
	}
	var supply []map[string]any
	srv.GetJSON(t, "/perp/tokenomics/staking_supply?start_date="+tip.Format(time.DateOnly), &supply)
	if len(supply) != 1 || fmt.Sprint(supply[0]["buybackDeposit"]) != "42.5" || supply[0]["buybackFee"] != nil {
		t.Errorf("staking supply with a programme address: %v, want buybackDeposit 42.5", supply)
	}
	var got []map[string]any
	srv.GetJSON(t, "/perp/tokenomics/buystake_address_metrics", &got)
	if len(got) == 0 {
		t.Fatalf("%d hours", len(got))
	}
	// Hourly by design, with no resolution parameter: a range longer than
	// 92 days is no error (the limit is for a chosen hourly resolution).
	var long []map[string]any
	srv.GetJSON(t, "/perp/tokenomics/buystake_address_metrics?start_date=2026-06-01&end_date=2026-11-30", &long)
	if len(long) != len(got) {
		t.Errorf("a 182-day range: %d hours, want the %d of the data", len(long), len(got))
	}
	last := got[0] // newest first
	if len(got) > 1 && last["labels"].(string) < got[len(got)-1]["labels"].(string) {
		t.Errorf("not newest first: %v … %v", last["labels"], got[len(got)-1]["labels"])
	}
	for k, w := range want {
		n, _ := last[k].(json.Number)
		g, ok := new(big.Rat).SetString(string(n))
		if !ok || g.Cmp(w) != 0 {
			t.Errorf("%s = %v, want %s", k, last[k], w.FloatString(18))
		}
	}
	if last["stakingRewardsUnclaimedNATIVE"] != nil {
		t.Errorf("unclaimed %v: not known from events", last["stakingRewardsUnclaimedNATIVE"])
	}
	// The price: the node's own price of the native token's oracle market.
	var native struct {
		Market int64 `bun:"market_id"`
	}
	if err := db.NewRaw("SELECT market_id FROM dydx_native_token WHERE chain_id = ? LIMIT 1", ch.ID).Scan(t.Context(), &native); err != nil {
		t.Fatal(err)
	}
	mp := dydxtest.MarketPrices(t)[native.Market]
	wantPrice, _ := new(big.Rat).SetString(mp.Price)
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(-mp.Exponent), nil))
	wantPrice.Quo(wantPrice, scale)
	n, _ := last["priceNATIVE"].(json.Number)
	if got, ok := new(big.Rat).SetString(string(n)); !ok || got.Cmp(wantPrice) != 0 || mp.Exponent >= 0 {
		t.Errorf("priceNATIVE %v, the node's market %d price %s e%d", last["priceNATIVE"], native.Market, mp.Price, mp.Exponent)
	}
	// bob withdrew at heights 303 and 304; the chain paid 0 (withdraw_rewards
	// amount "0stake", and the node's distribution query shows no rewards).
	if last["stakingRewardsClaimedNATIVE"] != json.Number("0") || last["stakingRewardsClaimedUSDC"] != json.Number("0") {
		t.Errorf("claimed %v / %v, the chain paid nothing", last["stakingRewardsClaimedNATIVE"], last["stakingRewardsClaimedUSDC"])
	}
	// An hour of activity before the range (here: five hours before the
	// first block) carries into every hour after it: 7 NATIVE more staked,
	// 1.5 USDC more held, 2 NATIVE of rewards claimed; nothing acquired in
	// the last hour but what was.
	if _, err := db.ExecContext(t.Context(), `INSERT INTO perp_buystake_hourly
		(chain_id, address, hour, native_in, usdc_in, native_delta, usdc_delta, staked_delta, claimed_native, claimed_usdc)
		VALUES (?, ?, ?, 9000000000000000000, 0, 0, 1500000, 7000000000000000000, 2000000000000000000, 0)`,
		ch.ID, bob, tip.Truncate(time.Hour).Add(-5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var again []map[string]any
	srv.GetJSON(t, "/perp/tokenomics/buystake_address_metrics", &again)
	plus := func(k string, d *big.Rat) string {
		n, _ := last[k].(json.Number)
		v, _ := new(big.Rat).SetString(string(n))
		return v.Add(v, d).FloatString(0)
	}
	for k, want := range map[string]string{
		"stakingBalance": plus("stakingBalance", big.NewRat(7, 1)), "stakingRewardsClaimedNATIVE": "2",
		"nativeAcquired": plus("nativeAcquired", new(big.Rat)),
	} {
		n, _ := again[0][k].(json.Number)
		if v, ok := new(big.Rat).SetString(string(n)); !ok || v.FloatString(0) != want {
			t.Errorf("after an earlier hour: %s = %v, want %s", k, again[0][k], want)
		}
	}
	n, _ = again[0]["liquidBalanceUSDC"].(json.Number)
	before, _ := last["liquidBalanceUSDC"].(json.Number)
	b, _ := new(big.Rat).SetString(string(before))
	if v, ok := new(big.Rat).SetString(string(n)); !ok || v.Cmp(b.Add(b, big.NewRat(3, 2))) != 0 {
		t.Errorf("after an earlier hour: liquidBalanceUSDC = %v, want %v + 1.5", n, before)
	}
}
