package dex_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"github.com/chainlens/chainlens/api"

	"cosmossdk.io/math"
)

type streamPage struct {
	Pagination struct {
		NextOffset *int64 `json:"next_offset"`
		TotalPools int64  `json:"total_pools"`
	} `json:"pagination"`
	Pools []streamPool `json:"pools"`
}

type streamPool struct {
	Main                 bool                            `json:"main"`
	Type                 string                          `json:"type"`
	PoolID               int64                           `json:"pool_id"`
	SwapFees             json.Number                     `json:"swap_fees"`
	ExitFees             json.Number                     `json:"exit_fees"`
	TotalWeightOrScaling json.Number                     `json:"total_weight_or_scaling"`
	TotalShares          struct{ Denom, Amount *string } `json:"total_shares"`
	PoolTokens           json.RawMessage                 `json:"pool_tokens"`
	Liquidity            *json.Number                    `json:"liquidity"`
	Liquidity24hChange   *json.Number                    `json:"liquidity_24h_change"`
	Volume24h            *json.Number                    `json:"volume_24h"`
	Volume24hChange      *json.Number                    `json:"volume_24h_change"`
	Volume7d             *json.Number                    `json:"volume_7d"`
	Address              string                          `json:"address"`
	SpreadFactor         *string                         `json:"spread_factor"`
	CurrentTick          *string                         `json:"current_tick"`
	TickSpacing          *string                         `json:"tick_spacing"`
	CurrentTickLiquidity *string                         `json:"current_tick_liquidity"`
	ExponentAtPriceOne   *string                         `json:"exponent_at_price_one"`
}

type streamToken struct {
	Denom, Amount   string
	WeightOrScaling *string `json:"weight_or_scaling"`
	Percent, Price  *string
	Price24hChange  *string `json:"price_24h_change"`
	Symbol          *string
}

func (p streamPage) ids() string {
	var s []string
	for _, x := range p.Pools {
		s = append(s, fmt.Sprint(x.PoolID))
	}
	return strings.Join(s, ",")
}

// TestPoolStreamOnLocalnet checks the pool stream against the node's pools
// at the last height (truth/pools.json, pool_total_liquidity.json): types,
// addresses, fees, weights and scaling factors (balancer weights × 2^30),
// total shares, reserves, CL tick and liquidity; liquidity = the reserves at
// the last closes; volumes equal /fees/v1/pools; then ordering, filters,
// pagination, and the 24-hour changes a day later.
func TestPoolStreamOnLocalnet(t *testing.T) {
	t.Parallel()
	db, ch, cfg := aggregatedLocalnet(t)
	s := serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))
	m := report.NewMarket(ch)
	get := func(path string) streamPage {
		t.Helper()
		resp, body := s.get(t, path)
		var p streamPage
		if err := json.Unmarshal([]byte(body), &p); resp.StatusCode != 200 || err != nil {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		validateAgainstOpenAPI(t, s, path, resp, body)
		return p
	}

	var truth struct {
		Pools []struct {
			Type       string `json:"@type"`
			ID         string `json:"id"`
			Address    string `json:"address"`
			PoolParams struct {
				SwapFee string `json:"swap_fee"`
				ExitFee string `json:"exit_fee"`
			} `json:"pool_params"`
			SpreadFactor string                          `json:"spread_factor"`
			TotalShares  *struct{ Denom, Amount string } `json:"total_shares"`
			PoolAssets   []struct {
				Token  struct{ Denom, Amount string }
				Weight string
			} `json:"pool_assets"`
			TotalWeight          string   `json:"total_weight"`
			ScalingFactors       []string `json:"scaling_factors"`
			CurrentTick          string   `json:"current_tick"`
			CurrentTickLiquidity string   `json:"current_tick_liquidity"`
			TickSpacing          string   `json:"tick_spacing"`
		} `json:"pools"`
	}
	truthFile(t, "pools.json", &truth)
	var reserves map[string]struct {
		Liquidity []struct{ Denom, Amount string } `json:"liquidity"`
	}
	truthFile(t, "pool_total_liquidity.json", &reserves)
	var fees struct {
		Data []struct {
			PoolID    string      `json:"pool_id"`
			Volume24h json.Number `json:"volume_24h"`
		} `json:"data"`
	}
	_, fb := s.get(t, "/fees/v1/pools")
	if err := json.Unmarshal([]byte(fb), &fees); err != nil {
		t.Fatal(err)
	}
	vol := map[string]json.Number{}
	for _, f := range fees.Data {
		vol[f.PoolID] = f.Volume24h
	}
	price := map[string]math.LegacyDec{}
	for _, d := range []string{"uatom", "uion", "uosmo", "uusdc", "uweth"} {
		var p string
		if err := db.NewRaw("SELECT price_usd::text FROM osmosis_asset_prices WHERE denom = ? ORDER BY hour DESC LIMIT 1", d).Scan(context.Background(), &p); err != nil {
			t.Fatal(err)
		}
		price[d] = math.LegacyMustNewDecFromStr(p)
	}

	all := get("/stream/pool/v1/all")
	// By liquidity, highest first: 3 (ATOM/OSMO), 1 (ION/OSMO/USDC), 4 (stable USDC/WETH), 5 (CL ION/OSMO), 2 (CL WETH/USDC).
	if all.ids() != "3,1,4,5,2" || all.Pagination.TotalPools != 5 || all.Pagination.NextOffset != nil {
		t.Errorf("pools %s, pagination %+v", all.ids(), all.Pagination)
	}
	types := map[string]string{
		"/osmosis.gamm.v1beta1.Pool": "osmosis.gamm.v1beta1.Pool", "/osmosis.gamm.poolmodels.stableswap.v1beta1.Pool": "osmosis.gamm.poolmodels.stableswap.v1beta1.Pool",
		"/osmosis.concentratedliquidity.v1beta1.Pool": "osmosis.concentratedliquidity.v1beta1.Pool",
	}
	for _, tp := range truth.Pools {
		var got *streamPool
		for i := range all.Pools {
			if fmt.Sprint(all.Pools[i].PoolID) == tp.ID {
				got = &all.Pools[i]
			}
		}
		if got == nil {
			t.Fatalf("pool %s missing", tp.ID)
		}
		fee := tp.PoolParams.SwapFee
		if fee == "" {
			fee = tp.SpreadFactor
		}
		exit := "0"
		if tp.PoolParams.ExitFee != "" {
			exit = tp.PoolParams.ExitFee
		}
		if got.ExitFees != api.Number(exit) {
			t.Errorf("pool %s: exit fee %s, node %s", tp.ID, got.ExitFees, exit)
		}
		if got.Type != types[tp.Type] || got.Address != tp.Address || got.SwapFees != api.Number(fee) {
			t.Errorf("pool %s: type %s address %s fee %s; node %s %s %s", tp.ID, got.Type, got.Address, got.SwapFees, tp.Type, tp.Address, fee)
		}
		if got.Volume24h == nil || *got.Volume24h != vol[tp.ID] || got.Volume7d == nil || *got.Volume7d != vol[tp.ID] || got.Volume24hChange != nil || got.Liquidity24hChange != nil {
			t.Errorf("pool %s: volumes %v %v, changes %v %v; fees endpoint %s", tp.ID, got.Volume24h, got.Volume7d, got.Volume24hChange, got.Liquidity24hChange, vol[tp.ID])
		}
		liq := math.LegacyZeroDec()
		want := map[string]string{}
		for _, r := range reserves[tp.ID].Liquidity {
			liq = liq.Add(m.USDValue(r.Denom, mustInt(r.Amount), price[r.Denom]))
			want[r.Denom] = r.Amount
		}
		if got.Liquidity == nil || *got.Liquidity != api.Number(liq.String()) {
			t.Errorf("pool %s: liquidity %v, node's reserves at the last closes %s", tp.ID, got.Liquidity, liq)
		}
		var tokens []streamToken
		if tp.CurrentTick != "" {
			var cl struct{ Asset0, Asset1 streamToken }
			if err := json.Unmarshal(got.PoolTokens, &cl); err != nil {
				t.Fatal(err)
			}
			tokens = []streamToken{cl.Asset0, cl.Asset1}
			if got.CurrentTick == nil || *got.CurrentTick != tp.CurrentTick || got.CurrentTickLiquidity == nil || *got.CurrentTickLiquidity != tp.CurrentTickLiquidity ||
				got.ExponentAtPriceOne == nil || *got.ExponentAtPriceOne != "-6" || got.TickSpacing == nil || *got.TickSpacing != tp.TickSpacing || got.TotalShares.Denom != nil || got.TotalWeightOrScaling != "0" {
				t.Errorf("CL pool %s: tick %v liquidity %v; node %s %s", tp.ID, got.CurrentTick, got.CurrentTickLiquidity, tp.CurrentTick, tp.CurrentTickLiquidity)
			}
		} else {
			if err := json.Unmarshal(got.PoolTokens, &tokens); err != nil {
				t.Fatal(err)
			}
			if got.TotalShares.Denom == nil || *got.TotalShares.Denom != tp.TotalShares.Denom || got.TotalShares.Amount == nil || *got.TotalShares.Amount != tp.TotalShares.Amount {
				t.Errorf("pool %s: shares %v %v, node %+v", tp.ID, got.TotalShares.Denom, got.TotalShares.Amount, tp.TotalShares)
			}
			weights := map[string]string{}
			total := tp.TotalWeight
			for _, a := range tp.PoolAssets {
				weights[a.Token.Denom] = a.Weight
			}
			if tp.ScalingFactors != nil { // stableswap: factors in the pool's (denom) order
				for i, r := range reserves[tp.ID].Liquidity {
					weights[r.Denom] = tp.ScalingFactors[i]
				}
				total = "2"
			}
			if string(got.TotalWeightOrScaling) != total {
				t.Errorf("pool %s: total weight %s, node %s", tp.ID, got.TotalWeightOrScaling, total)
			}
			for _, tk := range tokens {
				if tk.WeightOrScaling == nil || *tk.WeightOrScaling != weights[tk.Denom] {
					t.Errorf("pool %s %s: weight %v, node %s", tp.ID, tk.Denom, tk.WeightOrScaling, weights[tk.Denom])
				}
			}
		}
		pct := math.LegacyZeroDec()
		for _, tk := range tokens {
			if want[tk.Denom] != tk.Amount || tk.Price == nil || *tk.Price != string(api.Number(price[tk.Denom].String())) || tk.Price24hChange != nil {
				t.Errorf("pool %s token %+v, node amount %s", tp.ID, tk, want[tk.Denom])
			}
			pct = pct.Add(math.LegacyMustNewDecFromStr(*tk.Percent))
		}
		// Each percent is rounded to 18 decimals.
		if pct.Sub(math.LegacyNewDec(100)).Abs().GT(math.LegacyNewDecWithPrec(int64(len(tokens)), 18)) {
			t.Errorf("pool %s: percents add up to %s", tp.ID, pct)
		}
	}

	for _, c := range []struct {
		path, ids string
		total     int64
		next      *int64
	}{
		{"/stream/pool/v1/all?limit=2", "3,1", 5, ptr(2)},
		{"/stream/pool/v1/all?limit=2&offset=4", "2", 5, nil},
		{"/stream/pool/v1/all?offset=9", "", 5, nil},
		{"/stream/pool/v1/all?order_key=volume_24h&order_by=asc", "2,4,3,1,5", 5, nil},
		{"/stream/pool/v1/all?order_key=volume_24h", "5,1,3,4,2", 5, nil},
		{"/stream/pool/v1/all?min_liquidity=1000", "3,1,4,5", 4, nil},
		{"/stream/pool/v1/all?min_liquidity=1000000", "", 0, nil},
		{"/stream/pool/v1/all?pool_ids=2&pool_ids=5&limit=1", "5,2", 2, nil},
		{"/stream/pool/v1/all?pool_ids=2,4&min_liquidity=1000000", "4,2", 2, nil},
	} {
		p := get(c.path)
		if p.ids() != c.ids || p.Pagination.TotalPools != c.total || fmt.Sprint(deref(p.Pagination.NextOffset)) != fmt.Sprint(deref(c.next)) {
			t.Errorf("%s: pools %s %+v", c.path, p.ids(), p.Pagination)
		}
	}
	for _, path := range []string{"/stream/pool/v1/all?pool_ids=abc", "/stream/pool/v1/all?order_key=fees", "/stream/pool/v1/all?limit=0", "/stream/pool/v1/all?min_liquidity=x"} {
		if resp, body := s.get(t, path); resp.StatusCode != 400 {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}

	// A day later nothing traded: no 24-hour volume (−100 % against the day
	// before), the same reserves at the same closes (0 %).
	// The reserves a day back are read for every pool when the order needs
	// them, else for the page's pools only: both give the change.
	later := serve(t, db, cfg.Chains, time.Date(2026, 11, 22, 22, 0, 0, 0, time.UTC))
	for _, path := range []string{"/stream/pool/v1/all?order_key=liquidity_change&pool_ids=3", "/stream/pool/v1/all?pool_ids=3",
		"/stream/pool/v1/all?limit=1&offset=0"} {
		_, body := later.get(t, path)
		var p streamPage
		if err := json.Unmarshal([]byte(body), &p); err != nil || len(p.Pools) != 1 {
			t.Fatalf("%s: %s", path, body)
		}
		x := p.Pools[0]
		if fmt.Sprint(x.PoolID) != "3" || fmt.Sprint(deref(x.Volume24h)) != "0" || fmt.Sprint(deref(x.Volume24hChange)) != "-100" || fmt.Sprint(deref(x.Liquidity24hChange)) != "0" ||
			fmt.Sprint(deref(x.Volume7d)) != string(vol["3"]) {
			t.Errorf("%s a day later: pool %v volume %v (%v %%), liquidity change %v, 7d %v", path, x.PoolID, deref(x.Volume24h), deref(x.Volume24hChange), deref(x.Liquidity24hChange), deref(x.Volume7d))
		}
	}
}

func ptr(n int64) *int64 { return &n }

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func mustInt(s string) math.Int {
	n, ok := math.NewIntFromString(s)
	if !ok {
		panic(s)
	}
	return n
}
