package dex_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/osmosistest"
)

// Exact answers derived by hand from the recording:
//
// Positions: the create_position / add_to_position events (actions.md rows
// 27-34 and 44 give sender, pool, ticks and tx hash) and the sums of the
// collect_spread_rewards / collect_incentives events of each position id.
// Values are the deposited amounts at the 21:00 hourly closes (uion
// 4.153327807957258175, uosmo 1.81103865829427774, uweth
// 1.281698821270455963 USD, the same closes /tokens/v2/real-time serves),
// computed with 80-digit decimals and rounded to 18 places.
//
// Depth: the node's own pool reserves at height 299 (truth/pools.json):
// pool 3 (balancer 1:1) 5544494494 uatom / 52595525090 uosmo; pool 1
// (balancer uion 3, uosmo 5, uusdc 2) 7093916541 uion / 27324524721 uosmo;
// pool 4 (stableswap, scaling 1:1) 30239115095 uusdc / 10147906180 uweth.
// Balancer: base sold = R_b·((1/0.98)^(w_q/(w_b+w_q)) − 1), quote sold =
// R_q·(1.02^(w_b/(w_b+w_q)) − 1); stableswap: bisection on the CFMM
// x·y·(x²+y²) to the price ratio (its spot price there, 0.7807697366,
// matches truth/spot_prices.json's 0.78076974). Amounts are floored to base
// units; independently computed with 60-digit decimals.
func TestPositionsAndDepthOnLocalnet(t *testing.T) {
	t.Parallel()
	db, ch := osmosistest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a rerun changes nothing
		if err := sched.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	s := serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))

	const (
		pos1 = `{"total_spread_rewards":[{"denom":"uion","amount":"184406"},{"denom":"uosmo","amount":"833209"}],` +
			`"total_incentives_rewards":[{"denom":"uion","amount":"10991874"}],"total_forfeit_rewards":[],` +
			`"principal":{"action":"create_position","address":"osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh",` +
			`"tx_hash":"5BB56F39B555E26DC3FC98E4DA8C1EABB59DEE5F15A9170A3350C6C675E87B18","block":13,"tx_time":"2026-11-21 21:28:03",` +
			`"value":7775.402563737150826891,"position":{"position_id":1,"pool_id":5,"lower_tick":-108000000,"upper_tick":342000000},` +
			`"assets":[{"denom":"uion","amount":"1000000000","value":4153.327807957258175},{"denom":"uosmo","amount":"1999998586","value":3622.074755779892651891}]}}`
		pos9 = `{"total_spread_rewards":[],"total_incentives_rewards":[],"total_forfeit_rewards":[],` +
			`"principal":{"action":"add_to_position","address":"osmo1rlnwmr3j2hkgvsaf0ldere6u0ca8rdg7xvx0sk",` +
			`"tx_hash":"2845E7EE03EFEFE36B1BBFEE5F59FA27C80CAD07C577EB55B1CCD3203DC636EA","block":20,"tx_time":"2026-11-21 21:28:10",` +
			`"value":4088.2690605721352261,"position":{"position_id":9,"pool_id":5,"lower_tick":900000,"upper_tick":1100000},` +
			`"assets":[{"denom":"uion","amount":"494274579","value":2052.884353727066634442},{"denom":"uosmo","amount":"1123877007","value":2035.384706845068591658}]}}`
		pos3Rewards = `{"total_spread_rewards":[{"denom":"uosmo","amount":"77023"}],"total_incentives_rewards":[],"total_forfeit_rewards":[],` +
			`"principal":{"action":"create_position","address":"osmo1rlnwmr3j2hkgvsaf0ldere6u0ca8rdg7xvx0sk",` +
			`"tx_hash":"49157E0963BC02FD92C9F4F4FACF3849F927FDBDFAB4F8CCBAA3558F80CB7C1D","block":14,`
		pos5Rewards = `{"total_spread_rewards":[{"denom":"uion","amount":"457564"},{"denom":"uosmo","amount":"2310628"}],` +
			`"total_incentives_rewards":[{"denom":"uion","amount":"28924708"}],"total_forfeit_rewards":[],`
		pos7 = `"value":428.1697091270455963,"position":{"position_id":7,"pool_id":2,"lower_tick":-108000000,"upper_tick":342000000},` +
			`"assets":[{"denom":"uweth","amount":"100000000","value":128.1698821270455963},{"denom":"uusdc","amount":"299999827","value":299.999827}]}}`

		depth3 = `{"base_sell_depth":{"token_denom":"uatom","token_amount":"56.290727","usd_amount":"965.1176445322934593","depth":0.98},` +
			`"quote_sell_depth":{"token_denom":"uosmo","token_amount":"523.351448","usd_amount":"947.809704202287465343","depth":1.02}}`
		depth1 = `{"base_sell_depth":{"token_denom":"uion","token_amount":"90.14059","usd_amount":"374.383419072673946677","depth":0.98},` +
			`"quote_sell_depth":{"token_denom":"uosmo","token_amount":"203.666794","usd_amount":"368.848437344857055851","depth":1.02}}`
		depth4 = `{"base_sell_depth":{"token_denom":"uusdc","token_amount":"317.764831","usd_amount":"317.764831","depth":0.98},` +
			`"quote_sell_depth":{"token_denom":"uweth","token_amount":"255.236929","usd_amount":"327.136871043991058426","depth":1.02}}`
		// CL: the tick walk on the replayed state, equal (to the base unit)
		// to the walk on the node's own state: truth/pools.json current sqrt
		// price and tick, truth/cl_liquidity_per_tick_range.json.
		// Pool 5 down 2 %: within [1200000, 1500000); up 2 %: crosses 1500000.
		depth5 = `{"base_sell_depth":{"token_denom":"uion","token_amount":"82.478457","usd_amount":"342.560069015506976225","depth":0.98},` +
			`"quote_sell_depth":{"token_denom":"uosmo","token_amount":"54.357974","usd_amount":"98.44439230055523374","depth":1.02}}`
		depth2Numbers = `[{"hour":"2026-11-21 21:00:00","base_sell_depth":{"token_denom":"uweth","token_amount":6.987909,"usd_amount":8.956394728445210658,"depth":0.9},` +
			`"quote_sell_depth":{"token_denom":"uusdc","token_amount":11.3347,"usd_amount":11.3347,"depth":1.1}}]`
		depth3Numbers = `[{"hour":"2026-11-21 21:00:00","base_sell_depth":{"token_denom":"uatom","token_amount":56.290727,"usd_amount":965.1176445322934593,"depth":0.98},` +
			`"quote_sell_depth":{"token_denom":"uosmo","token_amount":523.351448,"usd_amount":947.809704202287465343,"depth":1.02}}]`
	)
	cases := []struct {
		name, path string
		status     int
		body       string // exact JSON; with prefix: a prefix; for problems a substring
		prefix     bool
	}{
		{"position created", "/cl/v1/position/last/id/1", 200, pos1, false},
		{"position added to", "/cl/v1/position/last/id/9", 200, pos9, false},
		{"position replaced by add_to_position keeps its rewards", "/cl/v1/position/last/id/3", 200, pos3Rewards, true},
		{"position with incentives, partly withdrawn", "/cl/v1/position/last/id/5", 200, pos5Rewards, true},
		{"position in the uweth/uusdc pool", "/cl/v1/position/last/id/7", 200, pos7, true},
		{"unknown position", "/cl/v1/position/last/id/99", 404, "position 99 not found", false},
		{"bad position id", "/cl/v1/position/last/id/x1", 400, "positionId", false},
		{"depth, balancer 1:1, default 2 %", "/pools/depth/3/current", 200, depth3, false},
		{"depth, balancer 3:5 of a three-asset pool", "/pools/depth/1/current?percent=2", 200, depth1, false},
		{"depth, stableswap", "/pools/depth/4/current?percent=2.0", 200, depth4, false},
		{"depth, concentrated liquidity", "/pools/depth/5/current", 200, depth5, false},
		{"depth, unknown pool", "/pools/depth/99/current", 404, "pool 99 not found", false},
		{"depth, percent 0", "/pools/depth/3/current?percent=0", 400, "percent", false},
		{"depth, percent above 50", "/pools/depth/3/current?percent=51", 400, "percent", false},
		{"depth over time", "/pools/depth/3/over_time?percent=2&start_date=2026-11-21", 200, depth3Numbers, false},
		{"depth over time, hours after the data", "/pools/depth/3/over_time?percent=2&start_date=2026-11-21T21:00:01Z", 200, "[]", false},
		{"depth over time, percent not in the set", "/pools/depth/3/over_time?percent=3&start_date=2026-11-21", 400, "percent", false},
		{"depth over time, no start", "/pools/depth/3/over_time?percent=2", 400, "start_date", false},
		{"depth over time, concentrated liquidity", "/pools/depth/2/over_time?percent=10&start_date=2026-11-21&end_date=2026-11-22", 200, depth2Numbers, false},
	}
	// Pools beside the recording's: a CosmWasm pool (depth not computed), a
	// balancer pool created at block 10 that never received liquidity, and
	// a balancer pool indexed before weights were.
	if _, err := db.ExecContext(context.Background(), `INSERT INTO osmosis_pools
		(chain_id, height, tx_index, event_index, msg_index, time, pool_id, type, creator, denoms, weights)
		SELECT ?, 10, 90 + n, 0, 0, (SELECT time FROM blocks WHERE chain_id = ? AND height = 10), 90 + n, t, 'osmo1creator', '{uion,uosmo}', w
		FROM (VALUES (0, 'cosmwasm', NULL::numeric[]), (1, 'balancer', '{1,1}'), (2, 'balancer', NULL)) v(n, t, w)`, ch.ID, ch.ID); err != nil {
		t.Fatal(err)
	}
	const (
		emptyNow  = `{"base_sell_depth":{"token_denom":"uion","token_amount":"0","usd_amount":"0","depth":0.98},"quote_sell_depth":{"token_denom":"uosmo","token_amount":"0","usd_amount":"0","depth":1.02}}`
		emptyHour = `[{"hour":"2026-11-21 21:00:00","base_sell_depth":{"token_denom":"uion","token_amount":0,"usd_amount":0,"depth":0.95},"quote_sell_depth":{"token_denom":"uosmo","token_amount":0,"usd_amount":0,"depth":1.05}}]`
	)
	cases = append(cases, []struct {
		name, path string
		status     int
		body       string
		prefix     bool
	}{
		{"depth, a pool without liquidity is zero deep", "/pools/depth/91/current", 200, emptyNow, false},
		{"depth over time, a pool without liquidity: zeros from its creation hour", "/pools/depth/91/over_time?percent=5&start_date=2026-11-20", 200, emptyHour, false},
		{"depth, CosmWasm pool", "/pools/depth/90/current", 400, `"name":"pool_id","reason":"pool 90 is a cosmwasm pool`, false},
		{"depth over time, CosmWasm pool", "/pools/depth/90/over_time?percent=2&start_date=2026-11-21", 400, "cosmwasm", false},
		{"depth, weights not indexed", "/pools/depth/92/current", 503, "weights are not indexed", false},
	}...)
	t.Run("replayed concentrated-liquidity state equals the node's", func(t *testing.T) {
		checkCLState(t, db)
	})
	// Malformed and hostile values: never a 5xx.
	for _, path := range []string{"/cl/v1/position/last/id/%s", "/pools/depth/%s/current?percent=%[1]s", "/pools/depth/1/current?percent=%s",
		"/pools/depth/%s/over_time?percent=2&start_date=%[1]s", "/pools/depth/5/over_time?percent=0.1&start_date=%s&end_date=%[1]s"} {
		for _, v := range []string{"' OR 1=1--", "%00", "ibc%2F498A", "..%2F..", "9999999999999999999", "-1", "1e309", "0.0000000000000000001", "0001-01-01", "9999-12-31"} {
			if resp, body := s.get(t, fmt.Sprintf(path, v)); resp.StatusCode >= 500 {
				t.Errorf("%s with %q: %d %s", path, v, resp.StatusCode, body)
			}
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := s.get(t, c.path)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			switch {
			case c.status != 200:
				if !strings.Contains(body, c.body) {
					t.Errorf("body %s, want it to contain %q", body, c.body)
				}
			case c.prefix:
				if !strings.HasPrefix(body, c.body) && !strings.HasSuffix(body, c.body) {
					t.Errorf("body\n got %s\nwant it to start or end with %s", body, c.body)
				}
			default:
				if body != c.body {
					t.Errorf("body\n got %s\nwant %s", body, c.body)
				}
			}
			validateAgainstOpenAPI(t, s, c.path, resp, body)
			if c.status == 200 && resp.Header.Get("X-Data-Height") != "299" {
				t.Errorf("X-Data-Height %q", resp.Header.Get("X-Data-Height"))
			}
		})
	}
}

// checkCLState compares the dex_cl_state job's pools with the node's own
// state at height 299 (truth/pools.json): the same current tick and
// liquidity in range, and the same sqrt price to 1e-18 (the replay follows
// the module's arithmetic; the last of its 36 digits differ).
func checkCLState(t *testing.T, db *bun.DB) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(osmosistest.Dir(), "truth", "pools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Pools []struct {
			ID        string `json:"id"`
			SqrtPrice string `json:"current_sqrt_price"`
			Tick      string `json:"current_tick"`
			Liquidity string `json:"current_tick_liquidity"`
		} `json:"pools"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range truth.Pools {
		if p.SqrtPrice == "" {
			continue
		}
		n++
		var got struct {
			SqrtPrice string `bun:"sqrt_price"`
			Tick      string `bun:"tick"`
			Liquidity string `bun:"liquidity"`
		}
		if err := db.NewRaw(`SELECT sqrt_price::text AS sqrt_price, tick::text AS tick, liquidity::text AS liquidity FROM osmosis_cl_state_hourly
			WHERE pool_id = ? ORDER BY hour DESC LIMIT 1`, p.ID).Scan(context.Background(), &got); err != nil {
			t.Fatalf("pool %s: %v", p.ID, err)
		}
		if got.Tick != p.Tick || got.Liquidity != p.Liquidity {
			t.Errorf("pool %s: tick %s liquidity %s, node %s %s", p.ID, got.Tick, got.Liquidity, p.Tick, p.Liquidity)
		}
		a, _ := new(big.Float).SetPrec(256).SetString(got.SqrtPrice)
		b, _ := new(big.Float).SetPrec(256).SetString(p.SqrtPrice)
		if a == nil || b == nil {
			t.Fatalf("pool %s: sqrt price %q vs %q", p.ID, got.SqrtPrice, p.SqrtPrice)
		}
		diff := new(big.Float).Abs(new(big.Float).Sub(a, b))
		if diff.Cmp(big.NewFloat(1e-18)) > 0 {
			t.Errorf("pool %s: sqrt price %s, node %s", p.ID, got.SqrtPrice, p.SqrtPrice)
		}
	}
	if n != 2 {
		t.Errorf("%d concentrated-liquidity pools in the truth, want 2", n)
	}
}
