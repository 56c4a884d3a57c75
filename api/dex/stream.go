package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"cosmossdk.io/math"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	report "github.com/chainlens/chainlens/report/dex"
)

// StreamToken is a token of a pool in the pool stream.
type StreamToken struct {
	Denom           string  `json:"denom"`
	Amount          string  `json:"amount"`
	Name            *string `json:"name"`
	Symbol          *string `json:"symbol"`
	Display         *string `json:"display"`
	Exponent        *string `json:"exponent"`
	MarketDataID    *string `json:"market_data_id"`
	WeightOrScaling *string `json:"weight_or_scaling"`
	Percent         *string `json:"percent"`
	Price           *string `json:"price"`
	Price24hChange  *string `json:"price_24h_change"`
}

// StreamShares is a pool's LP share denom and total.
type StreamShares struct {
	Denom  *string `json:"denom"`
	Amount *string `json:"amount"`
}

// StreamPool is a pool of the pool stream.
type StreamPool struct {
	Main                 bool         `json:"main"`
	Type                 string       `json:"type"`
	PoolID               int64        `json:"pool_id"`
	SwapFees             json.Number  `json:"swap_fees"`
	ExitFees             json.Number  `json:"exit_fees"`
	TotalWeightOrScaling json.Number  `json:"total_weight_or_scaling"`
	TotalShares          StreamShares `json:"total_shares"`
	// PoolTokens is []StreamToken, or for concentrated-liquidity pools
	// {asset0, asset1}.
	PoolTokens           any          `json:"pool_tokens"`
	Liquidity            *json.Number `json:"liquidity"`
	Liquidity24hChange   *json.Number `json:"liquidity_24h_change"`
	Volume24h            *json.Number `json:"volume_24h"`
	Volume24hChange      *json.Number `json:"volume_24h_change"`
	Volume7d             *json.Number `json:"volume_7d"`
	Address              string       `json:"address"`
	ExponentAtPriceOne   *string      `json:"exponent_at_price_one"`
	SpreadFactor         *string      `json:"spread_factor"`
	CurrentSqrtPrice     *string      `json:"current_sqrt_price"`
	TickSpacing          *string      `json:"tick_spacing"`
	CurrentTick          *string      `json:"current_tick"`
	CurrentTickLiquidity *string      `json:"current_tick_liquidity"`
	CodeID               *string      `json:"code_id"`
	InstantiateMsg       *string      `json:"instantiate_msg"`
}

// StreamPage is the pool stream answer.
type StreamPage struct {
	Pagination struct {
		NextOffset *int64 `json:"next_offset"`
		TotalPools int64  `json:"total_pools"`
	} `json:"pagination"`
	Pools []StreamPool `json:"pools"`
}

// streamTypes are the published type names of the pool types.
var streamTypes = map[string]string{
	"balancer":     "osmosis.gamm.v1beta1.Pool",
	"stableswap":   "osmosis.gamm.poolmodels.stableswap.v1beta1.Pool",
	"concentrated": "osmosis.concentratedliquidity.v1beta1.Pool",
	"cosmwasm":     "osmosis.cosmwasmpool.v1beta1.CosmWasmPool",
}

// balancerWeightScale is the factor by which a balancer pool scales the
// weights of its create message (GuaranteedWeightPrecision, 2^30).
var balancerWeightScale = math.NewInt(1 << 30)

// streamRow is one pool with its sort keys.
type streamRow struct {
	pool                                   StreamPool
	liquidity, liqChange, vol24, volChange *math.LegacyDec
	hasLiquidity                           bool
}

// poolStream answers every pool of known type with its tokens, reserves,
// liquidity and volumes from the report tables: the pool's create row
// (osmosis_known_pools: type, denoms, swap and exit fees, weights or scaling
// factors, tick spacing; exit_fees 0 when unknown), its last
// reserves (osmosis_pool_reserves_hourly, dex_liquidity) and total shares
// (osmosis_pool_shares_hourly, dex_portfolio), the concentrated-liquidity
// state (osmosis_cl_state_hourly, dex_cl_state), the last closes
// (osmosis_asset_prices, dex_prices) and the hourly volume
// (osmosis_pool_volume_hourly, dex_volume). liquidity = Σ reserves at their
// close; liquidity_24h_change compares it with the reserves at the end of
// the hour 24 hours back at that hour's closes, in percent; volume_24h and
// volume_7d add the hourly buckets overlapping the last 24 hours and 7
// days, volume_24h_change compares volume_24h with the 24 hours before, in
// percent. A change without a base is null. Pools below min_liquidity
// (unpriced pools included) are left out unless named in pool_ids.
func (s *Service) poolStream(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	var wanted map[int64]bool
	if ids := req.Params.Strings("pool_ids"); len(ids) > 0 {
		wanted = map[int64]bool{}
		for _, v := range ids {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil || id < 1 {
				return nil, problem.BadParam("pool_ids", "must be pool ids (digits)")
			}
			wanted[id] = true
		}
	}
	now := req.Now.UTC()
	dayAgo := now.Add(-24 * time.Hour)
	rows, err := s.streamRows(ctx, now, dayAgo)
	if err != nil {
		return nil, err
	}
	minLiq, err := math.LegacyNewDecFromStr(strconv.FormatFloat(req.Params.Float("min_liquidity"), 'f', -1, 64))
	if err != nil {
		return nil, problem.BadParam("min_liquidity", "must be a number")
	}
	var kept []streamRow
	for _, r := range rows {
		if wanted != nil {
			if wanted[r.pool.PoolID] {
				kept = append(kept, r)
			}
			continue
		}
		if r.liquidity != nil && r.liquidity.GTE(minLiq) {
			kept = append(kept, r)
		}
	}
	key := func(r streamRow) *math.LegacyDec {
		switch req.Params.String("order_key") {
		case "volume_24h":
			return r.vol24
		case "volume_24h_change":
			return r.volChange
		case "liquidity_change":
			return r.liqChange
		}
		return r.liquidity
	}
	desc := req.Params.String("order_by") != "asc"
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := key(kept[i]), key(kept[j])
		switch {
		case a == nil && b == nil:
			return kept[i].pool.PoolID < kept[j].pool.PoolID
		case a == nil || b == nil:
			return b == nil // nulls last
		case a.Equal(*b):
			return kept[i].pool.PoolID < kept[j].pool.PoolID
		case desc:
			return a.GT(*b)
		}
		return a.LT(*b)
	})
	out := StreamPage{Pools: []StreamPool{}}
	out.Pagination.TotalPools = int64(len(kept))
	offset := req.Params.Int("offset")
	limit := req.Params.Int("limit")
	if wanted != nil {
		limit = int64(len(kept))
	}
	for i := offset; i < int64(len(kept)) && i < offset+limit; i++ {
		out.Pools = append(out.Pools, kept[i].pool)
	}
	if next := offset + int64(len(out.Pools)); next < int64(len(kept)) {
		out.Pagination.NextOffset = &next
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// streamRows builds every pool of a known type.
func (s *Service) streamRows(ctx context.Context, now, dayAgo time.Time) ([]streamRow, error) {
	chain := s.market.ChainID
	var pools []struct {
		PoolID  int64    `bun:"pool_id"`
		Type    string   `bun:"type"`
		Denoms  []string `bun:"denoms,array"`
		Fee     *string  `bun:"fee"`
		Weights []string `bun:"weights,array"`
		Spacing *int64   `bun:"tick_spacing"`
		ExitFee *string  `bun:"exit_fee"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT DISTINCT ON (pool_id) pool_id, type, denoms, swap_fee::text AS fee, coalesce(weights::text[], '{}') AS weights, tick_spacing,
			exit_fee::text AS exit_fee
		FROM osmosis_known_pools WHERE chain_id = ? ORDER BY pool_id, height DESC, tx_index DESC, event_index DESC`, chain).Scan(ctx, &pools); err != nil {
		return nil, fmt.Errorf("pools: %w", err)
	}
	// Reserves and prices now (every row) and at the end of the hour
	// holding dayAgo: each "latest before" a backward index probe per key,
	// not a scan of the history, both times in one walk of the keys.
	back := dayAgo.Truncate(time.Hour).Add(time.Hour)
	at := []time.Time{endOfTime.Add(-time.Microsecond), back.Add(-time.Microsecond)}
	rs, err := report.ReservesAt(ctx, api.Reader(ctx, s.db), s.market.ChainID, at)
	if err != nil {
		return nil, err
	}
	res := []map[int64]map[string]math.Int{{}, {}}
	for _, r := range rs {
		a, ok := math.NewIntFromString(r.Amount)
		if !ok {
			return nil, fmt.Errorf("reserve %q", r.Amount)
		}
		if res[r.I][r.PoolID] == nil {
			res[r.I][r.PoolID] = map[string]math.Int{}
		}
		res[r.I][r.PoolID][r.Denom] = a
	}
	resNow, resBack := res[0], res[1]
	prices, err := s.pricesAtEach(ctx, at)
	if err != nil {
		return nil, err
	}
	priceNow, priceBack := prices[0], prices[1]
	var vols []struct {
		PoolID int64  `bun:"pool_id"`
		V24    string `bun:"v24"`
		VPrev  string `bun:"vprev"`
		V7     string `bun:"v7"`
	}
	day, prevDay, week := dayAgo.Truncate(time.Hour), now.Add(-48*time.Hour).Truncate(time.Hour), now.Add(-7*24*time.Hour).Truncate(time.Hour)
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT pool_id,
			coalesce(sum(volume_usd) FILTER (WHERE hour >= ?), 0)::text AS v24,
			coalesce(sum(volume_usd) FILTER (WHERE hour >= ? AND hour < ?), 0)::text AS vprev,
			coalesce(sum(volume_usd) FILTER (WHERE hour >= ?), 0)::text AS v7
		FROM osmosis_pool_volume_hourly WHERE chain_id = ? AND hour >= least(?::timestamptz, ?::timestamptz) GROUP BY pool_id`,
		day, prevDay, day, week, chain, prevDay, week).Scan(ctx, &vols); err != nil {
		return nil, fmt.Errorf("pool volumes: %w", err)
	}
	type volume struct{ v24, prev, v7 math.LegacyDec }
	volByPool := map[int64]volume{}
	for _, v := range vols {
		a, err1 := math.LegacyNewDecFromStr(v.V24)
		b, err2 := math.LegacyNewDecFromStr(v.VPrev)
		c, err3 := math.LegacyNewDecFromStr(v.V7)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("volume of pool %d: %q %q %q", v.PoolID, v.V24, v.VPrev, v.V7)
		}
		volByPool[v.PoolID] = volume{a, b, c}
	}
	shares := map[int64]string{}
	var sh []struct {
		PoolID int64  `bun:"pool_id"`
		Total  string `bun:"total"`
	}
	ids := make([]int64, len(pools))
	for i, p := range pools {
		ids[i] = p.PoolID
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT p.id AS pool_id, t.total::text AS total FROM unnest(?::bigint[]) p(id)
		CROSS JOIN LATERAL (SELECT total_shares AS total FROM osmosis_pool_shares_hourly WHERE chain_id = ? AND pool_id = p.id
			ORDER BY hour DESC LIMIT 1) t`, pgdialect.Array(ids), chain).Scan(ctx, &sh); err != nil {
		return nil, fmt.Errorf("pool shares: %w", err)
	}
	for _, r := range sh {
		shares[r.PoolID] = r.Total
	}
	var cls []struct {
		PoolID    int64  `bun:"pool_id"`
		SqrtPrice string `bun:"sqrt_price"`
		Tick      int64  `bun:"tick"`
		Liquidity string `bun:"liquidity"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT p.id AS pool_id, c.sqrt_price::text AS sqrt_price, c.tick, c.liquidity::text AS liquidity
		FROM unnest(?::bigint[]) p(id) CROSS JOIN LATERAL (SELECT sqrt_price, tick, liquidity FROM osmosis_cl_state_hourly
			WHERE chain_id = ? AND pool_id = p.id ORDER BY hour DESC LIMIT 1) c`, pgdialect.Array(ids), chain).Scan(ctx, &cls); err != nil {
		return nil, fmt.Errorf("pool states: %w", err)
	}
	clByPool := map[int64]int{}
	for i, c := range cls {
		clByPool[c.PoolID] = i
	}

	value := func(res map[string]math.Int, px map[string]math.LegacyDec) (math.LegacyDec, bool) {
		total, priced := math.LegacyZeroDec(), false
		for d, a := range res {
			if p, ok := px[d]; ok {
				total = total.Add(s.market.USDValue(d, a, p))
				priced = true
			}
		}
		return total, priced
	}
	var out []streamRow
	for _, p := range pools {
		typ, ok := streamTypes[p.Type]
		if !ok {
			continue
		}
		addr, err := s.poolAddress(p.PoolID)
		if err != nil {
			return nil, fmt.Errorf("address of pool %d: %w", p.PoolID, err)
		}
		r := streamRow{pool: StreamPool{Type: typ, PoolID: p.PoolID, ExitFees: "0", TotalWeightOrScaling: "0", Address: addr, Main: true}}
		if p.Fee != nil {
			r.pool.SwapFees = api.Number(*p.Fee)
		} else {
			r.pool.SwapFees = "0"
		}
		if p.ExitFee != nil {
			r.pool.ExitFees = api.Number(*p.ExitFee)
		}
		liq, priced := value(resNow[p.PoolID], priceNow)
		if priced {
			r.liquidity, r.hasLiquidity = &liq, true
			n := api.Number(liq.String())
			r.pool.Liquidity = &n
			if before, ok := value(resBack[p.PoolID], priceBack); ok && before.IsPositive() {
				ch := liq.Sub(before).MulInt64(100).Quo(before)
				r.liqChange = &ch
				n := api.Number(ch.String())
				r.pool.Liquidity24hChange = &n
			}
		}
		v := volByPool[p.PoolID]
		if v.v24.IsNil() {
			v = volume{math.LegacyZeroDec(), math.LegacyZeroDec(), math.LegacyZeroDec()}
		}
		v24, v7 := api.Number(v.v24.String()), api.Number(v.v7.String())
		r.vol24, r.pool.Volume24h, r.pool.Volume7d = &v.v24, &v24, &v7
		if v.prev.IsPositive() {
			ch := v.v24.Sub(v.prev).MulInt64(100).Quo(v.prev)
			r.volChange = &ch
			n := api.Number(ch.String())
			r.pool.Volume24hChange = &n
		}
		token := func(denom string, amount math.Int, weight *string) StreamToken {
			t := StreamToken{Denom: denom, Amount: amount.String(), WeightOrScaling: weight}
			if a, ok := s.market.Assets[denom]; ok {
				exp := strconv.Itoa(a.Exponent)
				t.Name, t.Symbol, t.Display, t.Exponent = strPtr(a.Name), strPtr(a.Symbol), strPtr(a.Display), &exp
				if a.MarketDataID != "" {
					t.MarketDataID = strPtr(a.MarketDataID)
				}
			} else {
				r.pool.Main = false // a token without metadata
			}
			if px, ok := priceNow[denom]; ok {
				t.Price = strPtr(string(api.Number(px.String())))
				if r.hasLiquidity && liq.IsPositive() {
					pct := s.market.USDValue(denom, amount, px).MulInt64(100).Quo(liq)
					t.Percent = strPtr(string(api.Number(pct.String())))
				}
				if old, ok := priceBack[denom]; ok && old.IsPositive() {
					t.Price24hChange = strPtr(string(api.Number(px.Sub(old).MulInt64(100).Quo(old).String())))
				}
			}
			return t
		}
		res := resNow[p.PoolID]
		amountOf := func(d string) math.Int {
			if a, ok := res[d]; ok {
				return a
			}
			return math.ZeroInt()
		}
		switch p.Type {
		case "concentrated":
			if len(p.Denoms) != 2 {
				continue
			}
			r.pool.PoolTokens = map[string]StreamToken{
				"asset0": token(p.Denoms[0], amountOf(p.Denoms[0]), nil),
				"asset1": token(p.Denoms[1], amountOf(p.Denoms[1]), nil),
			}
			r.pool.TotalShares = StreamShares{}
			r.pool.ExponentAtPriceOne = strPtr("-6")
			if p.Spacing != nil {
				r.pool.TickSpacing = strPtr(strconv.FormatInt(*p.Spacing, 10))
			}
			if p.Fee != nil {
				r.pool.SpreadFactor = strPtr(*p.Fee)
			}
			if i, ok := clByPool[p.PoolID]; ok {
				c := cls[i]
				tick := strconv.FormatInt(c.Tick, 10)
				r.pool.CurrentSqrtPrice, r.pool.CurrentTick, r.pool.CurrentTickLiquidity = strPtr(c.SqrtPrice), &tick, strPtr(c.Liquidity)
			}
		case "cosmwasm":
			tokens := []StreamToken{}
			for _, d := range sortedDenoms(p.Denoms) {
				tokens = append(tokens, token(d, amountOf(d), nil))
			}
			r.pool.PoolTokens = tokens
		default: // balancer, stableswap: tokens by denom, as the pool keeps them
			denom := "gamm/pool/" + strconv.FormatInt(p.PoolID, 10)
			r.pool.TotalShares = StreamShares{Denom: &denom}
			if t, ok := shares[p.PoolID]; ok {
				r.pool.TotalShares.Amount = strPtr(t)
			}
			weightOf := map[string]string{}
			total := math.ZeroInt()
			for i, d := range p.Denoms {
				if i >= len(p.Weights) {
					break
				}
				w, ok := math.NewIntFromString(api.Number(p.Weights[i]).String())
				if !ok {
					return nil, fmt.Errorf("weight %q of pool %d", p.Weights[i], p.PoolID)
				}
				if p.Type == "balancer" {
					w = w.Mul(balancerWeightScale)
				}
				weightOf[d] = w.String()
				total = total.Add(w)
			}
			r.pool.TotalWeightOrScaling = json.Number(total.String())
			tokens := []StreamToken{}
			for _, d := range sortedDenoms(p.Denoms) {
				var w *string
				if x, ok := weightOf[d]; ok {
					w = &x
				}
				tokens = append(tokens, token(d, amountOf(d), w))
			}
			r.pool.PoolTokens = tokens
		}
		out = append(out, r)
	}
	return out, nil
}

func sortedDenoms(ds []string) []string {
	out := append([]string(nil), ds...)
	sort.Strings(out)
	return out
}

func strPtr(s string) *string { return &s }
