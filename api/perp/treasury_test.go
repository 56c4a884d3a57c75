package perp_test

import (
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
)

// The dYdX localnet's test accounts (README of the recording).
var dydxAccounts = map[string]string{
	"alice": "dydx199tqg4wdlnu4qjlxchpd7seg454937hjrknju4",
	"bob":   "dydx10fx7sy6ywd5senxae9dwytf8jxek3t2gcen2vs",
	"carl":  "dydx1fjg6zp6vv8t9wvy4lps03r5l4g7tkjw9wvmh70",
	"dave":  "dydx1wau5mja7j7zdavtfq9lu7ejef05hm6ffenlcsn",
}

// walletTruth is what the node's queries at the last height say a wallet
// holds: liquid and delegated NATIVE and USDC, in display units.
type walletTruth struct{ liquid, staked, usdc *big.Rat }

func dydxWalletTruth(t *testing.T, name string) walletTruth {
	t.Helper()
	var delegations struct {
		Responses []struct {
			Balance struct{ Amount string } `json:"balance"`
		} `json:"delegation_responses"`
	}
	dydxtest.Truth(t, "delegations_"+name+".json", &delegations)
	var bank struct {
		Balances map[string][]struct{ Denom, Amount string } `json:"balances"`
	}
	dydxtest.Truth(t, "bank_balances.json", &bank)
	native := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	w := walletTruth{liquid: new(big.Rat), staked: new(big.Rat), usdc: new(big.Rat)}
	for _, d := range delegations.Responses {
		v, _ := new(big.Rat).SetString(d.Balance.Amount)
		w.staked.Add(w.staked, v.Quo(v, native))
	}
	for _, c := range bank.Balances[dydxAccounts[name]] {
		v, _ := new(big.Rat).SetString(c.Amount)
		switch c.Denom {
		case "adv4tnt":
			w.liquid.Add(w.liquid, v.Quo(v, native))
		case "ibc/8E27BA2D5493AF5636760E354E46004562C46AB7EC0CC4C1CA14E9E20E2545B5":
			w.usdc.Add(w.usdc, v.Quo(v, big.NewRat(1_000_000, 1)))
		default:
			t.Fatalf("%s holds %s: not a category of the test", name, c.Denom)
		}
	}
	return w
}

// TestTreasurySubDAO takes dYdX localnet accounts as the treasury wallets:
// at the last day, their NATIVE held and delegated and their USDC, in USD
// at the node's own oracle price, equal the node's bank and staking queries
// at the last height. Wallets added to the configuration after the job ran
// are aggregated from the first height; wallets removed drop out; the
// buy-and-stake address follows its configuration the same way.
func TestTreasurySubDAO(t *testing.T) {
	t.Parallel()
	db, ch := dydxtest.New(t)
	var tip time.Time
	if err := db.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height = ?", ch.ID, dydxtest.LastHeight).Scan(t.Context(), &tip); err != nil {
		t.Fatal(err)
	}
	var native struct {
		Market int64 `bun:"market_id"`
	}
	if err := db.NewRaw("SELECT market_id FROM dydx_native_token WHERE chain_id = ? LIMIT 1", ch.ID).Scan(t.Context(), &native); err != nil {
		t.Fatal(err)
	}
	mp := dydxtest.MarketPrices(t)[native.Market]
	price, _ := new(big.Rat).SetString(mp.Price)
	price.Quo(price, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(-mp.Exponent), nil)))

	// First run: bob only, no buy-and-stake address.
	cfg := &config.Config{Chains: []config.Chain{ch}, Perp: config.Perp{TreasurySubDAO: []string{dydxAccounts["bob"]}}}
	apitest.RunJobs(t, db, cfg)

	usd := func(v *big.Rat) string { return api.Number(new(big.Rat).Mul(v, price).FloatString(6)).String() }
	check := func(t *testing.T, names ...string) {
		t.Helper()
		cfg.API = apitest.DefaultAPI(t, true)
		srv := apitest.Serve(t, db, cfg, tip.Add(time.Hour))
		sum := walletTruth{liquid: new(big.Rat), staked: new(big.Rat), usdc: new(big.Rat)}
		for _, n := range names {
			w := dydxWalletTruth(t, n)
			sum.liquid.Add(sum.liquid, w.liquid)
			sum.staked.Add(sum.staked, w.staked)
			sum.usdc.Add(sum.usdc, w.usdc)
		}
		total := new(big.Rat).Add(sum.liquid, sum.staked)
		total.Mul(total, price)
		total.Add(total, sum.usdc)
		want := map[string]string{
			"native_liquid": usd(sum.liquid), "native_staked": usd(sum.staked),
			"usdc": api.Number(sum.usdc.FloatString(6)).String(), "other": "0",
			"total": api.Number(total.FloatString(6)).String(),
		}
		var got []map[string]any
		srv.GetJSON(t, "/tokenomics/wallets/treasury_subdao?balance_categories=native_liquid,native_staked,usdc,other,total", &got)
		if len(got) == 0 {
			t.Fatal("no days")
		}
		last := got[len(got)-1]
		if last["labels"] != tip.UTC().Truncate(24*time.Hour).Format(time.DateTime) {
			t.Errorf("last day %s, the last block's is %s", last["labels"], tip.UTC().Format(time.DateOnly))
		}
		for k, w := range want {
			if n, _ := last[k].(json.Number); n.String() != w {
				t.Errorf("%v: %s = %s, want %s", names, k, last[k], w)
			}
		}
		if sum.staked.Sign() == 0 && len(names) > 1 {
			t.Errorf("truth: %v delegated nothing", names)
		}
	}
	t.Run("bob", func(t *testing.T) { check(t, "bob") })

	// Wallets added after the job caught up are aggregated from the first
	// height; the buy-and-stake address set now as well.
	cfg.Perp = config.Perp{TreasurySubDAO: []string{dydxAccounts["alice"], dydxAccounts["bob"], dydxAccounts["carl"], dydxAccounts["dave"]},
		BuyStakeAddress: dydxAccounts["dave"]}
	apitest.RunJobs(t, db, cfg)
	t.Run("all four", func(t *testing.T) { check(t, "alice", "bob", "carl", "dave") })
	t.Run("buy-and-stake address set later", func(t *testing.T) {
		cfg.API = apitest.DefaultAPI(t, true)
		srv := apitest.Serve(t, db, cfg, tip.Add(time.Hour))
		var got []map[string]any
		srv.GetJSON(t, "/perp/tokenomics/buystake_address_metrics", &got)
		w := dydxWalletTruth(t, "dave")
		if len(got) == 0 {
			t.Fatal("no hours")
		}
		for k, want := range map[string]*big.Rat{"stakingBalance": w.staked, "liquidBalanceNATIVE": w.liquid, "liquidBalanceUSDC": w.usdc} {
			n, _ := got[0][k].(json.Number)
			if g, ok := new(big.Rat).SetString(string(n)); !ok || g.Cmp(want) != 0 {
				t.Errorf("dave's %s = %v, want %s", k, got[0][k], want.FloatString(18))
			}
		}
	})

	// A wallet removed from the configuration drops out.
	cfg.Perp = config.Perp{TreasurySubDAO: []string{dydxAccounts["carl"]}}
	apitest.RunJobs(t, db, cfg)
	t.Run("carl only", func(t *testing.T) { check(t, "carl") })
	var rows int
	if err := db.NewRaw("SELECT count(*) FROM perp_buystake_hourly WHERE chain_id = ?", ch.ID).Scan(t.Context(), &rows); err != nil || rows != 0 {
		t.Errorf("buy-and-stake rows after the address was unset: %d (%v)", rows, err)
	}
}
