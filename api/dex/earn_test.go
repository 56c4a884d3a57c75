package dex_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// serveConfig builds the API for a whole config, with the clock fixed at
// now and the response cache off (tests change the tables between two
// identical requests).
func serveConfig(t *testing.T, db *bun.DB, cfg *config.Config, now time.Time) server {
	t.Helper()
	cfg.API = apitest.DefaultAPI(t, true)
	srv := apitest.Serve(t, db, cfg, now)
	return server{url: srv.URL, key: srv.Key}
}

// earnStrategies are LP strategies on the localnet's three gamm pools.
var earnStrategies = []config.Strategy{
	{ID: "ion-osmo-usdc-lp", Kind: "lp", Type: "levana-pool-lp", Name: "ION/OSMO/USDC", Provider: "Osmosis", Category: "Liquidity",
		Link: "https://example.test/pool/1", PoolID: 1, LockDuration: config.Duration(24 * time.Hour)},
	{ID: "atom-osmo-lp", Kind: "lp", Type: "levana-pool-lp", Name: "ATOM/OSMO", Provider: "Osmosis", Category: "Liquidity", PoolID: 3},
	{ID: "usdc-weth-stable-lp", Kind: "lp", Type: "levana-pool-lp", Name: "USDC/WETH", Provider: "Osmosis", Category: "Liquidity", PoolID: 4},
	// Pool 2 is concentrated liquidity (no LP shares), pool 9 does not exist:
	// neither is computed.
	{ID: "cl-pool", Kind: "lp", Type: "quasar-cl-vault", Name: "CL", Provider: "Osmosis", Category: "Liquidity", PoolID: 2},
	{ID: "no-pool", Kind: "lp", Type: "levana-pool-lp", Name: "None", Provider: "Osmosis", Category: "Liquidity", PoolID: 9},
}

// Expected values, from truth/pools.json and truth/balances.json at height
// 299 (reserves, total shares, each holder's shares) and the latest hourly
// closes that TestEndpointsOnLocalnet asserts (uosmo 1.81103865829427774,
// uatom 17.145233255422220063, uion 4.153327807957258175, uweth
// 1.281698821270455963, uusdc 1): an asset's tvl = reserve / 10^6 × close,
// rounded to 18 decimals, e.g. pool 1 uion 7093916541 / 10^6 ×
// 4.153327807957258175 = 29463.360837063265188639(5) → ...64 (trailing 0
// dropped). The APR is the swap fees of the pool's hours (volume × swap fee
// 0.003 / 0.002 / 0.001) × 365/7 / TVL × 100; checked against the volume
// report below.
const (
	pool1TVL = `{"tvlUsd":"98637.88914931192898811","assets":[{"coinMinimalDenom":"uion","tvl":"29463.36083706326518864"},` +
		`{"coinMinimalDenom":"uosmo","tvl":"49485.77058924866379947"},{"coinMinimalDenom":"uusdc","tvl":"19688.757723"}]}`
	pool3TVL = `{"tvlUsd":"190314.180574310816262158","assets":[{"coinMinimalDenom":"uatom","tvl":"95061.65138303419478456"},` +
		`{"coinMinimalDenom":"uosmo","tvl":"95252.529191276621477598"}]}`
	pool4TVL = `{"tvlUsd":"43245.674484269175518346","assets":[{"coinMinimalDenom":"uusdc","tvl":"30239.115095"},` +
		`{"coinMinimalDenom":"uweth","tvl":"13006.559389269175518346"}]}`
	ionD  = `{"denom":"uion","name":"","symbol":""}`
	osmoD = `{"denom":"uosmo","name":"Osmosis","symbol":"OSMO"}`
	usdcD = `{"denom":"uusdc","name":"USD Coin","symbol":"USDC"}`
	atomD = `{"denom":"uatom","name":"Cosmos Hub","symbol":"ATOM"}`
	wethD = `{"denom":"uweth","name":"Wrapped Ether","symbol":"WETH"}`

	strategiesList = `[{"id":"ion-osmo-usdc-lp","type":"levana-pool-lp","name":"ION/OSMO/USDC","provider":"Osmosis","category":"Liquidity",` +
		`"link":"https://example.test/pool/1","tvl":` + pool1TVL + `,"apr":0.810358409921699672,` +
		`"tokenDenoms":[` + ionD + `,` + osmoD + `,` + usdcD + `],"rewardDenoms":[` + ionD + `,` + osmoD + `,` + usdcD + `],"lockDuration":86400},` +
		`{"id":"atom-osmo-lp","type":"levana-pool-lp","name":"ATOM/OSMO","provider":"Osmosis","category":"Liquidity","link":"","tvl":` + pool3TVL +
		`,"apr":0.139295292579922745,"tokenDenoms":[` + atomD + `,` + osmoD + `],"rewardDenoms":[` + atomD + `,` + osmoD + `]},` +
		`{"id":"usdc-weth-stable-lp","type":"levana-pool-lp","name":"USDC/WETH","provider":"Osmosis","category":"Liquidity","link":"","tvl":` + pool4TVL +
		`,"apr":0.071088713749153479,"tokenDenoms":[` + usdcD + `,` + wethD + `],"rewardDenoms":[` + usdcD + `,` + wethD + `]}]`

	// The named accounts (alice, bob, ...) are declared in apr_test.go.
)

func balanceBody(strategy, amount, usd, denom, supply string) string {
	symbol := strings.ToUpper(strings.ReplaceAll(denom, "/", "-"))
	return `{"strategy":"` + strategy + `","balance":{"amount":"` + amount + `","usd":` + usd + `},"token":{"name":"` + denom +
		`","symbol":"` + symbol + `","decimals":18,"total_supply":"` + supply + `"},"unclaimed_rewards":{"total_usd":0}}`
}

// TestEarnOnLocalnet indexes the recorded localnet, runs the jobs with LP
// strategies on its three gamm pools and checks the four earn endpoints.
func TestEarnOnLocalnet(t *testing.T) {
	t.Parallel()
	db, ch := osmosistest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}, Earn: config.Earn{Strategies: earnStrategies}}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := serveConfig(t, db, cfg, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))
	const pool1Supply, pool3Supply, pool4Supply = "100025092889217569600", "108000000001200406700", "101000000001899453000"
	cases := []struct {
		name, path string
		status     int
		body       string // exact JSON, or a substring for problems
	}{
		{"list", "/earn/strategies", 200, strategiesList},
		{"apr", "/earn/strategies/atom-osmo-lp/apr", 200, `{"apr":0.139295292579922745}`},
		{"tvl", "/earn/strategies/ion-osmo-usdc-lp/tvl", 200, pool1TVL},
		{"tvl, stableswap", "/earn/strategies/usdc-weth-stable-lp/tvl", 200, pool4TVL},
		// balance usd = shares / total shares (truth) × the TVL above, 18 decimals:
		// 10^20 / 100025092889217569600 × 98637.88914931192898811.
		{"balance, bob in pool 1", "/earn/strategies/ion-osmo-usdc-lp/balance/" + bob, 200,
			balanceBody("ion-osmo-usdc-lp", "100000000000000000000", "98613.144262268235927267", "gamm/pool/1", pool1Supply)},
		{"balance, carol in pool 1", "/earn/strategies/ion-osmo-usdc-lp/balance/" + carol, 200,
			balanceBody("ion-osmo-usdc-lp", "25092889217569600", "24.744887043693060842", "gamm/pool/1", pool1Supply)},
		// alice holds 98333333333333333333 shares in the bank and 1666666666666666667
		// in lock 2, bob 6750000001200406700 and 1250000000000000000 in lock 3
		// (truth/balances.json, truth/lockup_locks.json).
		{"balance, alice in pool 3, bank and lock", "/earn/strategies/atom-osmo-lp/balance/" + alice, 200,
			balanceBody("atom-osmo-lp", "100000000000000000000", "176216.833863143979242534", "gamm/pool/3", pool3Supply)},
		{"balance, bob in pool 3, bank and lock", "/earn/strategies/atom-osmo-lp/balance/" + bob, 200,
			balanceBody("atom-osmo-lp", "8000000001200406700", "14097.346711166837019623", "gamm/pool/3", pool3Supply)},
		{"balance, the lockup module holds for its owners", "/earn/strategies/atom-osmo-lp/balance/osmo1njty28rqtpw6n59sjj4esw76enp4mg6g7cwrhc", 200,
			balanceBody("atom-osmo-lp", "0", "0", "gamm/pool/3", pool3Supply)},
		{"balance, dave in pool 4", "/earn/strategies/usdc-weth-stable-lp/balance/" + dave, 200,
			balanceBody("usdc-weth-stable-lp", "1000000001899453000", "428.174995699000033409", "gamm/pool/4", pool4Supply)},
		{"balance, never held", "/earn/strategies/usdc-weth-stable-lp/balance/" + alice, 200,
			balanceBody("usdc-weth-stable-lp", "0", "0", "gamm/pool/4", pool4Supply)},
		{"balance, bad address", "/earn/strategies/atom-osmo-lp/balance/cosmos1abc", 400, "address"},
		{"balance, unknown strategy", "/earn/strategies/nope/balance/" + bob, 404, "strategy nope"},
		{"apr, unknown strategy", "/earn/strategies/nope/apr", 404, "strategy nope"},
		{"tvl, unknown strategy", "/earn/strategies/nope/tvl", 404, "strategy nope"},
		{"tvl, a concentrated pool", "/earn/strategies/cl-pool/tvl", 503, "not computed"},
		{"apr, a pool that does not exist", "/earn/strategies/no-pool/apr", 503, "not computed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := s.get(t, c.path)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.status == 200 && body != c.body || c.status != 200 && !strings.Contains(body, c.body) {
				t.Errorf("body\n%s\nwant\n%s", body, c.body)
			}
			if c.status == 200 && resp.Header.Get("X-Data-Height") != "299" {
				t.Errorf("X-Data-Height %q", resp.Header.Get("X-Data-Height"))
			}
			validateAgainstOpenAPI(t, s, c.path, resp, body)
		})
	}

	// The holders' shares add up to each pool's total shares (truth), and
	// the APRs follow from the pools' volume report.
	ctx := context.Background()
	for id, supply := range map[string]string{"ion-osmo-usdc-lp": pool1Supply, "atom-osmo-lp": pool3Supply, "usdc-weth-stable-lp": pool4Supply} {
		var sum string
		if err := db.NewRaw("SELECT sum(amount)::text FROM earn_strategy_balances WHERE strategy = ?", id).Scan(ctx, &sum); err != nil || sum != supply {
			t.Errorf("%s: holders hold %s (%v), want %s", id, sum, err, supply)
		}
	}
	var apr string
	if err := db.NewRaw(`SELECT round(sum(v.volume_usd) * 0.003 * 36500 / 7 / s.tvl_usd, 18)::text FROM osmosis_pool_volume_hourly v, earn_strategy_state s
		WHERE v.pool_id = 1 AND s.strategy = 'ion-osmo-usdc-lp' GROUP BY s.tvl_usd`).Scan(ctx, &apr); err != nil || apr != "0.810358409921699672" {
		t.Errorf("pool 1 APR from the volume report: %s (%v)", apr, err)
	}

	// A rerun over the same heights writes the same rows; a strategy
	// declared later starts from height 0.
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'dex_earn'"); err != nil {
		t.Fatal(err)
	}
	cfg.Earn.Strategies = append(cfg.Earn.Strategies[:1:1], earnStrategies[1:3]...)
	cfg.Earn.Strategies = append(cfg.Earn.Strategies, config.Strategy{ID: "pool-3-again", Kind: "lp", Type: "levana-pool-lp", Name: "x",
		Provider: "Osmosis", Category: "Liquidity", PoolID: 3})
	sched, err = aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	s2 := serveConfig(t, db, cfg, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))
	if _, body := s2.get(t, "/earn/strategies/ion-osmo-usdc-lp/balance/"+bob); body != cases[4].body {
		t.Errorf("rerun: %s", body)
	}
	if _, body := s2.get(t, "/earn/strategies/pool-3-again/balance/"+alice); body != balanceBody("pool-3-again", "100000000000000000000", "176216.833863143979242534", "gamm/pool/3", pool3Supply) {
		t.Errorf("strategy declared later: %s", body)
	}
}

// TestEarnBeforeTheJob answers 503 for a declared strategy the job has not
// computed, and an empty list.
func TestEarnBeforeTheJob(t *testing.T) {
	t.Parallel()
	db, ch := osmosistest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}, Earn: config.Earn{Strategies: earnStrategies}}
	s := serveConfig(t, db, cfg, time.Now())
	for path, want := range map[string]int{"/earn/strategies": 200, "/earn/strategies/atom-osmo-lp/apr": 503,
		"/earn/strategies/atom-osmo-lp/tvl": 503, "/earn/strategies/atom-osmo-lp/balance/" + bob: 503, "/earn/strategies/nope/tvl": 404} {
		resp, body := s.get(t, path)
		if resp.StatusCode != want || want == 200 && body != "[]" {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
}

// TestEarnOrdersIBCWithoutChains: without a dex chain the earn and order
// endpoints answer 503; without any channel the IBC status answers 503
// naming ibc.channels.
func TestEarnOrdersIBCWithoutChains(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	s := serveConfig(t, db, &config.Config{Earn: config.Earn{Strategies: earnStrategies}}, time.Now())
	for path, want := range map[string]int{
		"/earn/strategies": 503, "/earn/strategies/atom-osmo-lp/tvl": 503, "/earn/strategies/atom-osmo-lp/apr": 503,
		"/users/limit_orders/history/closed?address=" + bob: 503, "/ibc/v1/source/osmosis/destination/cosmoshub": 503,
	} {
		if resp, body := s.get(t, path); resp.StatusCode != want {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
}
