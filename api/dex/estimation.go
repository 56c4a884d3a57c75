package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"

	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	report "github.com/chainlens/chainlens/report/dex"
)

// lpEstimate is the estimated USD rewards of one pool or of all.
type lpEstimate struct {
	DayUSD   json.Number `json:"day_usd"`
	MonthUSD json.Number `json:"month_usd"`
	YearUSD  json.Number `json:"year_usd"`
}

// lpEstimation estimates the USD rewards per day, month (a twelfth of a
// year) and year of the address's liquidity at the current APRs, that is at
// the pace of the pools APR window (see poolsapr.go):
//
//   - classic pool shares (osmosis_lp_holdings, locked shares included):
//     the pool's window earnings (swap fees and incentives) × the address's
//     share of the pool (osmosis_pool_shares), plus the pool's superfluid
//     rewards × the address's share of the superfluid-staked shares,
//     annualised;
//   - open concentrated-liquidity positions (osmosis_cl_open_positions):
//     the position's liquidity × what a unit of liquidity in its range
//     earned over the window, annualised (0 when out of range).
//
// Shares the address staked through superfluid (osmosis_superfluid_locks
// of its locks) also earn their part of the pool's superfluid rewards over
// the window (see superfluidAPR).
func (s *Service) lpEstimation(ctx context.Context, req *api.Request) (*api.Response, error) {
	addr := req.Params.String("bech32Address")
	if hrp, _, err := bech32.DecodeAndConvert(addr); err != nil || (s.market.Prefix != "" && hrp != s.market.Prefix) {
		return nil, problem.BadParam("bech32Address", fmt.Sprintf("must be a bech32 account address with prefix %s", s.market.Prefix))
	}
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	w, err := s.window(ctx, fresh)
	if err != nil {
		return nil, err
	}
	shares, positions, err := s.lpHoldings(ctx, addr)
	if err != nil {
		return nil, err
	}
	byID, cls, err := s.lpPools(ctx, w, shares, positions)
	if err != nil {
		return nil, err
	}
	yearly := map[int64]*big.Rat{}
	var order []int64
	credit := func(pool int64, usd *big.Rat) {
		if y, ok := yearly[pool]; ok {
			y.Add(y, usd)
			return
		}
		yearly[pool] = usd
		order = append(order, pool)
	}
	annual := new(big.Rat).Quo(big.NewRat(secondsPerYear, 1), w.seconds)
	for _, h := range shares {
		pool, found := byID[h.Pool]
		sh, ok1 := new(big.Rat).SetString(h.Shares)
		tot, ok2 := new(big.Rat).SetString(h.Total)
		staked, ok3 := new(big.Rat).SetString(h.Staked)
		allStaked, ok4 := new(big.Rat).SetString(h.AllSF)
		if !ok1 || !ok2 || !ok3 || !ok4 || !found {
			return nil, fmt.Errorf("pool %d shares %q of %q", h.Pool, h.Shares, h.Total)
		}
		e := pool.sum()
		usd := total(e.fees, e.native, e.boost)
		usd.Mul(usd, sh).Quo(usd, tot)
		if staked.Sign() > 0 && allStaked.Sign() > 0 {
			sf := new(big.Rat).Set(pool.SFEarned)
			usd.Add(usd, sf.Mul(sf, staked).Quo(sf, allStaked))
		}
		credit(h.Pool, usd.Mul(usd, annual))
	}
	ranges := make([]report.Range, len(positions))
	for i, p := range positions {
		if _, ok := byID[p.Pool]; !ok {
			return nil, fmt.Errorf("pool %d of position %d not found", p.Pool, p.Position)
		}
		if _, ok := cls[p.Pool]; !ok {
			return nil, fmt.Errorf("pool %d has no replayed state yet: %w", p.Pool, problem.ErrNotIndexed)
		}
		ranges[i] = report.Range{Pool: p.Pool, Lower: p.Lower, Upper: p.Upper}
	}
	earned, err := s.earnedPerLiquidity(ctx, w, ranges)
	if err != nil {
		return nil, err
	}
	for i, p := range positions {
		liq, ok := new(big.Rat).SetString(p.Liquidity)
		if !ok {
			return nil, fmt.Errorf("position %d liquidity %q", p.Position, p.Liquidity)
		}
		e := earned[i]
		usd := total(e.fees, e.native, e.boost)
		usd.Mul(usd, liq).Mul(usd, annual)
		credit(p.Pool, usd)
	}
	out := struct {
		Pools         map[string]lpEstimate `json:"pools"`
		TotalDayUSD   json.Number           `json:"total_day_usd"`
		TotalMonthUSD json.Number           `json:"total_month_usd"`
		TotalYearUSD  json.Number           `json:"total_year_usd"`
	}{Pools: map[string]lpEstimate{}}
	sum := new(big.Rat)
	for _, id := range order {
		y := yearly[id]
		sum.Add(sum, y)
		out.Pools[strconv.FormatInt(id, 10)] = estimate(y)
	}
	t := estimate(sum)
	out.TotalDayUSD, out.TotalMonthUSD, out.TotalYearUSD = t.DayUSD, t.MonthUSD, t.YearUSD
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// lpShare is an address's shares of a classic pool, with the pool's total
// and the superfluid-staked shares (the address's and all).
type lpShare struct {
	Pool   int64  `bun:"pool_id"`
	Shares string `bun:"shares"`
	Total  string `bun:"total"`
	Staked string `bun:"staked"` // through superfluid, by the address
	AllSF  string `bun:"all_staked"`
}

// lpPosition is an address's open concentrated-liquidity position.
type lpPosition struct {
	Position  int64  `bun:"position_id"`
	Pool      int64  `bun:"pool_id"`
	Lower     int64  `bun:"lower_tick"`
	Upper     int64  `bun:"upper_tick"`
	Liquidity string `bun:"liquidity"`
}

// lpHoldings reads the address's pool shares (osmosis_lp_holdings) and open
// positions (osmosis_cl_open_positions).
func (s *Service) lpHoldings(ctx context.Context, addr string) ([]lpShare, []lpPosition, error) {
	var shares []lpShare
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT h.pool_id, h.shares::text AS shares, t.total::text AS total,
			coalesce((SELECT sum(l.shares) FROM osmosis_superfluid_locks l WHERE l.chain_id = h.chain_id
				AND l.denom = 'gamm/pool/' || h.pool_id AND l.owner = h.address), 0)::text AS staked,
			coalesce((SELECT sum(l.shares) FROM osmosis_superfluid_locks l WHERE l.chain_id = h.chain_id
				AND l.denom = 'gamm/pool/' || h.pool_id), 0)::text AS all_staked
		FROM osmosis_lp_holdings h
		JOIN osmosis_pool_shares t ON t.chain_id = h.chain_id AND t.pool_id = h.pool_id
		WHERE h.chain_id = ? AND h.address = ? AND t.total > 0 ORDER BY h.pool_id`, s.market.ChainID, addr).Scan(ctx, &shares); err != nil {
		return nil, nil, fmt.Errorf("share holdings: %w", err)
	}
	var positions []lpPosition
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT position_id, pool_id, lower_tick, upper_tick, liquidity::text AS liquidity FROM osmosis_cl_open_positions
		WHERE chain_id = ? AND address = ? ORDER BY position_id`, s.market.ChainID, addr).Scan(ctx, &positions); err != nil {
		return nil, nil, fmt.Errorf("open positions: %w", err)
	}
	return shares, positions, nil
}

// lpPools reads every pool held or positioned in at once, with the
// concentrated pools' states: a statement per kind of data, not per pool
// (a provider in 40 pools took 40 rounds of them).
func (s *Service) lpPools(ctx context.Context, w aprContext, shares []lpShare, positions []lpPosition) (map[int64]*aprPool, map[int64]*clState, error) {
	var ids []int64
	seen := map[int64]bool{}
	add := func(id int64) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, h := range shares {
		add(h.Pool)
	}
	for _, p := range positions {
		add(p.Pool)
	}
	pools, err := s.aprPools(ctx, w, ids)
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[int64]*aprPool, len(pools))
	for _, p := range pools {
		byID[p.ID] = p
	}
	var clOnes []*aprPool // the pools of the positions
	inCL := map[int64]bool{}
	for _, p := range positions {
		if pl, ok := byID[p.Pool]; ok && !inCL[p.Pool] {
			inCL[p.Pool] = true
			clOnes = append(clOnes, pl)
		}
	}
	cls, err := s.clPools(ctx, clOnes)
	if err != nil {
		return nil, nil, err
	}
	return byID, cls, nil
}

// estimate splits a yearly USD amount into a day (1/365) and a month (1/12).
func estimate(year *big.Rat) lpEstimate {
	return lpEstimate{
		DayUSD:   ratNumber(new(big.Rat).Quo(year, big.NewRat(365, 1))),
		MonthUSD: ratNumber(new(big.Rat).Quo(year, big.NewRat(12, 1))),
		YearUSD:  ratNumber(year),
	}
}
