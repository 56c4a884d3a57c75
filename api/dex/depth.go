package dex

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"
	report "github.com/chainlens/chainlens/report/dex"
)

// Depth is one side of a pool depth record; Amount and USD are strings
// for the current depth and numbers over time (json.Number renders both).
type Depth struct {
	TokenDenom  string      `json:"token_denom"`
	TokenAmount any         `json:"token_amount"`
	USDAmount   any         `json:"usd_amount"`
	Depth       json.Number `json:"depth"`
}

// DepthRecord is the current pool depth.
type DepthRecord struct {
	BaseSellDepth  Depth `json:"base_sell_depth"`
	QuoteSellDepth Depth `json:"quote_sell_depth"`
}

// DepthHour is the pool depth at the end of an hour.
type DepthHour struct {
	Hour           string `json:"hour"`
	BaseSellDepth  Depth  `json:"base_sell_depth"`
	QuoteSellDepth Depth  `json:"quote_sell_depth"`
}

// depthPool is a pool's model: for gamm pools its denoms sorted (the order
// of the pool's state; base = the first, quote = the second) with their
// balancer weights or stableswap scaling factors; for concentrated-liquidity
// pools token0 (base) and token1 (quote).
type depthPool struct {
	id      int64
	typ     string
	created time.Time
	denoms  []string
	weights map[string]math.Int
}

// loadDepthPool reads the pool from osmosis_known_pools; unknown → 404, a pool
// type whose depth is not computed (CosmWasm) → 400 naming pool_id, a
// balancer or stableswap pool indexed before its weights were → 503.
func (s *Service) loadDepthPool(ctx context.Context, req *api.Request) (depthPool, error) {
	id, err := strconv.ParseInt(req.Params.String("pool_id"), 10, 64)
	if err != nil || id < 1 {
		return depthPool{}, problem.BadParam("pool_id", "must be a pool id (digits)")
	}
	var rows []struct {
		Type    string    `bun:"type"`
		Time    time.Time `bun:"time"`
		Denoms  []string  `bun:"denoms,array"`
		Weights []string  `bun:"weights,array"`
	}
	if err := api.Reader(ctx, s.db).NewRaw("SELECT type, time, denoms, weights::text[] AS weights FROM osmosis_known_pools WHERE chain_id = ? AND pool_id = ?",
		s.market.ChainID, id).Scan(ctx, &rows); err != nil {
		return depthPool{}, fmt.Errorf("pool %d: %w", id, err)
	}
	if len(rows) == 0 {
		return depthPool{}, problem.Status(http.StatusNotFound, "pool %d not found", id)
	}
	r := rows[0]
	switch r.Type {
	case "balancer", "stableswap":
	case "concentrated":
		if len(r.Denoms) != 2 {
			return depthPool{}, fmt.Errorf("pool %d: denoms %v", id, r.Denoms)
		}
		return depthPool{id: id, typ: r.Type, created: r.Time, denoms: r.Denoms}, nil // base = token0, quote = token1
	default:
		return depthPool{}, problem.BadParam("pool_id", fmt.Sprintf("pool %d is a %s pool: depth is computed for balancer, stableswap and concentrated-liquidity pools", id, r.Type))
	}
	if len(r.Weights) != len(r.Denoms) || len(r.Denoms) < 2 {
		return depthPool{}, fmt.Errorf("pool %d: its weights are not indexed (reindex the chain): %w", id, problem.ErrNotIndexed)
	}
	p := depthPool{id: id, typ: r.Type, created: r.Time, denoms: slices.Sorted(slices.Values(r.Denoms)), weights: map[string]math.Int{}}
	for i, d := range r.Denoms {
		w, ok := math.NewIntFromString(r.Weights[i])
		if !ok || !w.IsPositive() {
			return depthPool{}, fmt.Errorf("pool %d: weight %q", id, r.Weights[i])
		}
		p.weights[d] = w
	}
	return p, nil
}

// sell is the amount of denom "in" (base units, floored) that moves its
// price against "out" to ratio r, given the pool's reserves.
func (p depthPool) sell(in, out string, reserves map[string]math.Int, r math.LegacyDec) (math.Int, error) {
	if p.typ == "balancer" {
		d, err := balancerDepth(reserves[in], p.weights[in], p.weights[out], r)
		if err != nil {
			return math.Int{}, err
		}
		return d.TruncateInt(), nil
	}
	scaled := func(d string) math.LegacyDec {
		return math.LegacyNewDecFromInt(reserves[d]).QuoInt(p.weights[d])
	}
	ss := stableswap{x: scaled(in), y: scaled(out), w: math.LegacyZeroDec()}
	for _, d := range p.denoms {
		if d != in && d != out {
			ss.w = ss.w.Add(scaled(d).Mul(scaled(d)))
		}
	}
	d, err := ss.depth(r)
	if err != nil {
		return math.Int{}, err
	}
	return d.MulInt(p.weights[in]).TruncateInt(), nil
}

// depthAt computes both sides for a price move of pct percent from the
// reserves and USD prices. A pool that holds nothing (a concentrated-
// liquidity pool without liquidity, a gamm pool with an empty reserve)
// has zero depth on both sides.
func (s *Service) depthAt(p depthPool, reserves map[string]math.Int, prices map[string]math.LegacyDec, cl *clmath.CLPool, pct math.LegacyDec) (base, quote depthSide, err error) {
	b, q := p.denoms[0], p.denoms[1]
	down := math.LegacyOneDec().Sub(pct.QuoInt64(100))
	up := math.LegacyOneDec().Add(pct.QuoInt64(100))
	empty := p.typ == "concentrated" && cl == nil
	for _, d := range p.denoms {
		if r, has := reserves[d]; p.typ != "concentrated" && (!has || !r.IsPositive()) {
			empty = true
		}
	}
	if empty {
		zero := math.LegacyZeroDec()
		return depthSide{denom: b, amount: zero, usd: zero, factor: down}, depthSide{denom: q, amount: zero, usd: zero, factor: up}, nil
	}
	side := func(in, out string, r, factor math.LegacyDec) (depthSide, error) {
		var amt math.Int
		var err error
		if cl != nil {
			// the spot price of token0 in token1 moves to factor times itself
			target := clmath.ScaleSqrtPrice(cl.SqrtPrice, factor.BigInt())
			amt = math.NewIntFromBigInt(cl.SellDepth(in == p.denoms[0], target))
		} else {
			amt, err = p.sell(in, out, reserves, r)
		}
		if err != nil {
			return depthSide{}, fmt.Errorf("depth of pool %d: %w", p.id, err)
		}
		display := math.LegacyNewDecFromInt(amt).Quo(pow10(s.market.Exponent(in)))
		usd := math.LegacyZeroDec()
		if price, has := prices[in]; has {
			usd = s.market.USDValue(in, amt, price)
		}
		return depthSide{denom: in, amount: display, usd: usd, factor: factor}, nil
	}
	if base, err = side(b, q, down, down); err != nil {
		return
	}
	quote, err = side(q, b, math.LegacyOneDec().Quo(up), up)
	return base, quote, err
}

func pow10(n int) math.LegacyDec { return math.LegacyNewDec(10).Power(uint64(n)) }

type depthSide struct {
	denom       string
	amount, usd math.LegacyDec
	factor      math.LegacyDec
}

func (d depthSide) render() Depth {
	return Depth{TokenDenom: d.denom, TokenAmount: string(api.Number(d.amount.String())), USDAmount: string(api.Number(d.usd.String())), Depth: api.Number(d.factor.String())}
}

func (d depthSide) renderNumbers() Depth {
	return Depth{TokenDenom: d.denom, TokenAmount: api.Number(d.amount.String()), USDAmount: api.Number(d.usd.String()), Depth: api.Number(d.factor.String())}
}

// percentParam parses the percent parameter exactly: > 0 and ≤ 50.
func percentParam(req *api.Request) (math.LegacyDec, error) {
	pct, err := math.LegacyNewDecFromStr(req.Params.String("percent"))
	if err != nil || !pct.IsPositive() || pct.GT(math.LegacyNewDec(50)) {
		return math.LegacyDec{}, problem.BadParam("percent", "must be a number > 0 and ≤ 50")
	}
	return pct, nil
}

// poolState is a pool's reserves (osmosis_pool_reserves_hourly, dex_liquidity
// job) and its denoms' USD prices (osmosis_asset_prices, dex_prices job),
// each as a history of hourly values ending at or before end.
type poolState struct {
	reserves map[string][]hourValue
	prices   map[string][]hourValue
	cl       []clHour // concentrated-liquidity pools: osmosis_cl_state_hourly (dex_cl_state job)
}

type clHour struct {
	hour      time.Time
	sqrtPrice string
	tick      int64
	liquidity string
	ticks     []clmath.CLTick
}

// clAt is the concentrated-liquidity pool at the end of hour h (nil for
// other pools, or before its first position).
func (st poolState) clAt(h time.Time) (*clmath.CLPool, error) {
	i, _ := slices.BinarySearchFunc(st.cl, h, func(v clHour, t time.Time) int { return v.hour.Compare(t) })
	if i == len(st.cl) || !st.cl[i].hour.Equal(h) {
		i--
	}
	if i < 0 {
		return nil, nil
	}
	c := st.cl[i]
	return clmath.CLPoolFromState(c.sqrtPrice, c.tick, c.liquidity, c.ticks)
}

type hourValue struct {
	hour  time.Time
	value string
}

// loadPoolState reads the pool's state at the end of every hour from
// from to end: each series' last value at or before from (one index probe
// each), then its values after it, so a request reads the hours it
// answers, not the pool's history.
func (s *Service) loadPoolState(ctx context.Context, p depthPool, from, end time.Time) (poolState, error) {
	st := poolState{reserves: map[string][]hourValue{}, prices: map[string][]hourValue{}}
	var rows []struct {
		Denom string    `bun:"denom"`
		Hour  time.Time `bun:"hour"`
		Value string    `bun:"value"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT r.denom, r.hour, r.value FROM unnest(?0::text[]) d(denom)
		CROSS JOIN LATERAL (SELECT denom, hour, amount::text AS value FROM osmosis_pool_reserves_hourly
			WHERE chain_id = ?1 AND pool_id = ?2 AND denom = d.denom AND hour <= ?3 ORDER BY hour DESC LIMIT 1) r
		UNION ALL SELECT denom, hour, amount::text FROM osmosis_pool_reserves_hourly WHERE chain_id = ?1 AND pool_id = ?2 AND hour > ?3 AND hour <= ?4
		ORDER BY hour`, pgdialect.Array(p.denoms), s.market.ChainID, p.id, from, end).Scan(ctx, &rows); err != nil {
		return st, fmt.Errorf("reserves of pool %d: %w", p.id, err)
	}
	for _, r := range rows {
		st.reserves[r.Denom] = append(st.reserves[r.Denom], hourValue{r.Hour.UTC(), r.Value})
	}
	rows = rows[:0]
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT r.denom, r.hour, r.value FROM unnest(?0::text[]) d(denom)
		CROSS JOIN LATERAL (SELECT denom, hour, price_usd::text AS value FROM osmosis_asset_prices
			WHERE chain_id = ?1 AND denom = d.denom AND hour <= ?2 ORDER BY hour DESC LIMIT 1) r
		UNION ALL SELECT denom, hour, price_usd::text FROM osmosis_asset_prices WHERE chain_id = ?1 AND denom IN (?4) AND hour > ?2 AND hour <= ?3
		ORDER BY hour`, pgdialect.Array(p.denoms), s.market.ChainID, from, end, bun.List(p.denoms)).Scan(ctx, &rows); err != nil {
		return st, fmt.Errorf("prices of pool %d: %w", p.id, err)
	}
	for _, r := range rows {
		st.prices[r.Denom] = append(st.prices[r.Denom], hourValue{r.Hour.UTC(), r.Value})
	}
	if p.typ != "concentrated" {
		return st, nil
	}
	var states []struct {
		Hour      time.Time `bun:"hour"`
		SqrtPrice string    `bun:"sqrt_price"`
		Tick      int64     `bun:"tick"`
		Liquidity string    `bun:"liquidity"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`(SELECT hour, sqrt_price::text AS sqrt_price, tick, liquidity::text AS liquidity FROM osmosis_cl_state_hourly
			WHERE chain_id = ?0 AND pool_id = ?1 AND hour <= ?2 ORDER BY hour DESC LIMIT 1)
		UNION ALL SELECT hour, sqrt_price::text, tick, liquidity::text FROM osmosis_cl_state_hourly
			WHERE chain_id = ?0 AND pool_id = ?1 AND hour > ?2 AND hour <= ?3
		ORDER BY hour`, s.market.ChainID, p.id, from, end).Scan(ctx, &states); err != nil {
		return st, fmt.Errorf("state of pool %d: %w", p.id, err)
	}
	if len(states) == 0 {
		return st, nil
	}
	// The ticks at the first state's hour, then each hour's changes on
	// top (a tick of gross 0 is no longer initialized).
	first := states[0].Hour.UTC()
	at, err := report.TicksAt(ctx, api.Reader(ctx, s.db), s.market.ChainID, p.id, first)
	if err != nil {
		return st, err
	}
	changes, err := report.PoolTickChanges(ctx, api.Reader(ctx, s.db), s.market.ChainID, p.id, first, end)
	if err != nil {
		return st, err
	}
	ticks := make(map[int64]clmath.CLTick, len(at))
	for _, t := range at {
		ticks[t.Tick] = t.CLTick
	}
	k := 0
	for _, c := range states {
		h := c.Hour.UTC()
		for ; k < len(changes) && !changes[k].Hour.After(h); k++ {
			if t := changes[k].CLTick; isZeroDec(t.Gross) {
				delete(ticks, t.Tick)
			} else {
				ticks[t.Tick] = t
			}
		}
		list := make([]clmath.CLTick, 0, len(ticks))
		for _, t := range ticks {
			list = append(list, t)
		}
		slices.SortFunc(list, func(a, b clmath.CLTick) int { return cmp.Compare(a.Tick, b.Tick) })
		st.cl = append(st.cl, clHour{hour: h, sqrtPrice: c.SqrtPrice, tick: c.Tick, liquidity: c.Liquidity, ticks: list})
	}
	return st, nil
}

// isZeroDec reports whether a decimal string is zero ("0", "0.000…").
func isZeroDec(s string) bool { return strings.Trim(s, "0.") == "" }

// at is the state at the end of hour h: each series' last value at or before h.
func (st poolState) at(h time.Time) (map[string]math.Int, map[string]math.LegacyDec, error) {
	last := func(vs []hourValue) (string, bool) {
		i, _ := slices.BinarySearchFunc(vs, h, func(v hourValue, t time.Time) int { return v.hour.Compare(t) })
		if i < len(vs) && vs[i].hour.Equal(h) {
			return vs[i].value, true
		}
		if i == 0 {
			return "", false
		}
		return vs[i-1].value, true
	}
	reserves, prices := map[string]math.Int{}, map[string]math.LegacyDec{}
	for d, vs := range st.reserves {
		if v, ok := last(vs); ok {
			n, ok := math.NewIntFromString(v)
			if !ok {
				return nil, nil, fmt.Errorf("reserve %q", v)
			}
			reserves[d] = n
		}
	}
	for d, vs := range st.prices {
		if v, ok := last(vs); ok {
			p, err := math.LegacyNewDecFromStr(v)
			if err != nil {
				return nil, nil, fmt.Errorf("price %q: %w", v, err)
			}
			prices[d] = p
		}
	}
	return reserves, prices, nil
}

// depthCurrent is the depth of a pool at its latest state and prices, for
// a move of percent on each side, fees excluded: balancer and stableswap
// pools from their reserves (osmosis_pool_reserves_hourly) and weights or
// scaling factors, concentrated-liquidity pools by a walk over the
// initialized ticks of their replayed state (osmosis_cl_state_hourly and
// osmosis_cl_tick_changes, dex_cl_state job). CosmWasm pools answer 501.
func (s *Service) depthCurrent(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	pct, err := percentParam(req)
	if err != nil {
		return nil, err
	}
	p, err := s.loadDepthPool(ctx, req)
	if err != nil {
		return nil, err
	}
	end := fresh.Chains[0].Time.UTC().Truncate(time.Hour)
	st, err := s.loadPoolState(ctx, p, end, end)
	if err != nil {
		return nil, err
	}
	reserves, prices, err := st.at(end)
	if err != nil {
		return nil, fmt.Errorf("pool %d: %w", p.id, err)
	}
	cl, err := st.clAt(end)
	if err != nil {
		return nil, fmt.Errorf("pool %d: %w", p.id, err)
	}
	base, quote, err := s.depthAt(p, reserves, prices, cl, pct)
	if err != nil {
		return nil, err
	}
	return &api.Response{Body: DepthRecord{BaseSellDepth: base.render(), QuoteSellDepth: quote.render()}, Freshness: fresh}, nil
}

// depthOverTime is the depth at the end of every hour whose start is in
// the range, from the hour the pool was created to the hour of the last
// indexed block (an hour in which the pool held nothing has zero depth).
func (s *Service) depthOverTime(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	pct, err := percentParam(req)
	if err != nil {
		return nil, err
	}
	r, err := req.Params.DateRange(req.Now, true)
	if err != nil {
		return nil, err
	}
	p, err := s.loadDepthPool(ctx, req)
	if err != nil {
		return nil, err
	}
	first := r.Start.UTC().Truncate(time.Hour)
	if first.Before(r.Start) {
		first = first.Add(time.Hour)
	}
	if created := p.created.UTC().Truncate(time.Hour); first.Before(created) {
		first = created
	}
	last := r.End.UTC().Truncate(time.Hour)
	if tip := fresh.Chains[0].Time.UTC().Truncate(time.Hour); tip.Before(last) {
		last = tip
	}
	out := []DepthHour{}
	if last.Before(first) {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	st, err := s.loadPoolState(ctx, p, first, last)
	if err != nil {
		return nil, err
	}
	for h := first; !h.After(last); h = h.Add(time.Hour) {
		reserves, prices, err := st.at(h)
		if err != nil {
			return nil, fmt.Errorf("pool %d: %w", p.id, err)
		}
		cl, err := st.clAt(h)
		if err != nil {
			return nil, fmt.Errorf("pool %d: %w", p.id, err)
		}
		base, quote, err := s.depthAt(p, reserves, prices, cl, pct)
		if err != nil {
			return nil, err
		}
		out = append(out, DepthHour{Hour: h.Format(time.DateTime), BaseSellDepth: base.renderNumbers(), QuoteSellDepth: quote.renderNumbers()})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
