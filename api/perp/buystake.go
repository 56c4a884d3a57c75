package perp

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// buyStake is, per UTC hour of the range up to the last aggregated block
// (newest first), the programme address's NATIVE bought in the hour and,
// at the hour's end, its delegated NATIVE, its NATIVE and USDC balances and
// the NATIVE and USDC staking rewards it has withdrawn
// (perp_buystake_hourly), with the hour's last oracle price of NATIVE in
// USDC (the raw price × 10^exponent of its oracle market).
// Unwithdrawn rewards are null: the events do not give them (the
// distribution module's state does).
func (s *Service) buyStake(ctx context.Context, req *api.Request) (*api.Response, error) {
	if s.buyStakeAddress == "" {
		return nil, problem.NotConfigured("perp.buystake_address", "no buy-and-stake address is configured")
	}
	// Hourly rows by design, with no resolution parameter: the 92-day
	// limit of a client-chosen hourly resolution does not apply.
	fresh, bs, err := s.windowOf(ctx, req, api.Hour, false, report.BuyStakeHourly, report.PriceHourly)
	if err != nil {
		return nil, err
	}
	type row struct {
		Labels        string       `json:"labels"`
		Price         *json.Number `json:"priceNATIVE"`
		Acquired      *json.Number `json:"nativeAcquired"`
		Staked        *json.Number `json:"stakingBalance"`
		LiquidNative  *json.Number `json:"liquidBalanceNATIVE"`
		LiquidUSDC    *json.Number `json:"liquidBalanceUSDC"`
		UnclaimedNat  *json.Number `json:"stakingRewardsUnclaimedNATIVE"`
		UnclaimedUSDC *json.Number `json:"stakingRewardsUnclaimedUSDC"`
		ClaimedNative *json.Number `json:"stakingRewardsClaimedNATIVE"`
		ClaimedUSDC   *json.Number `json:"stakingRewardsClaimedUSDC"`
	}
	out := make([]row, 0, len(bs))
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	var native struct {
		Decimals int64  `bun:"decimals"`
		Market   int64  `bun:"market_id"`
		Exponent *int64 `bun:"exponent"`
	}
	err = api.Reader(ctx, s.db).NewRaw(`SELECT n.decimals, n.market_id,
			(SELECT d.exponent FROM dydx_markets d WHERE d.chain_id = ?0 AND d.market_id = n.market_id ORDER BY d.height DESC LIMIT 1) AS exponent
		FROM (SELECT decimals, market_id FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1) n`, s.chainID).Scan(ctx, &native)
	if errors.Is(err, sql.ErrNoRows) { // no genesis catalog: NATIVE is unknown
		return nil, fmt.Errorf("chain %s: the native token is not in the catalog: %w", s.chainID, problem.ErrNotIndexed)
	}
	if err != nil {
		return nil, fmt.Errorf("native token: %w", err)
	}
	// The address's hours with activity up to the range's end, oldest
	// first: their running sums are its balances at each hour's end (one
	// pass, whatever the range's length).
	last := api.NextBucket(bs[len(bs)-1], api.Hour)
	var acts []struct {
		Hour    time.Time `bun:"hour"`
		In      string    `bun:"native_in"`
		Staked  string    `bun:"staked_delta"`
		Native  string    `bun:"native_delta"`
		USDC    string    `bun:"usdc_delta"`
		CNative string    `bun:"claimed_native"`
		CUSDC   string    `bun:"claimed_usdc"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT hour, native_in::text AS native_in, staked_delta::text AS staked_delta, native_delta::text AS native_delta,
			usdc_delta::text AS usdc_delta, claimed_native::text AS claimed_native, claimed_usdc::text AS claimed_usdc
		FROM perp_buystake_hourly WHERE chain_id = ? AND address = ? AND hour < ? ORDER BY hour`, s.chainID, s.buyStakeAddress, last).
		Scan(ctx, &acts); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("perp_buystake_hourly: %w", err)
	}
	var prices []change
	if native.Exponent != nil {
		if prices, err = s.changes(ctx, "perp_price_hourly", "market_id", "price", []int64{native.Market}, api.NextBucket(bs[0], api.Hour), last); err != nil {
			return nil, err
		}
	}
	unit, usdc := pow10(-native.Decimals), pow10(-6)
	sums := make([]*big.Rat, 5) // staked, native, usdc, claimed native, claimed usdc
	for i := range sums {
		sums[i] = new(big.Rat)
	}
	var price *big.Rat
	num := func(r *big.Rat, scale *big.Rat, digits int) *json.Number {
		return number(new(big.Rat).Mul(r, scale), digits)
	}
	i, j := 0, 0
	for _, h := range bs {
		end := api.NextBucket(h, api.Hour)
		acquired := new(big.Rat)
		for ; i < len(acts) && acts[i].Hour.Before(end); i++ {
			a := acts[i]
			for k, v := range []string{a.Staked, a.Native, a.USDC, a.CNative, a.CUSDC} {
				d, err := rat(v)
				if err != nil {
					return nil, fmt.Errorf("perp_buystake_hourly %s: %w", a.Hour, err)
				}
				sums[k].Add(sums[k], d)
			}
			if a.Hour.Equal(h) {
				if acquired, err = rat(a.In); err != nil {
					return nil, fmt.Errorf("perp_buystake_hourly %s: %w", a.Hour, err)
				}
			}
		}
		for ; j < len(prices) && prices[j].Hour.Before(end); j++ {
			p, err := rat(prices[j].Value)
			if err != nil {
				return nil, err
			}
			price = p.Mul(p, pow10(*native.Exponent))
		}
		o := row{Labels: h.UTC().Format(time.DateTime), Acquired: num(acquired, unit, 18), Staked: num(sums[0], unit, 18),
			LiquidNative: num(sums[1], unit, 18), LiquidUSDC: num(sums[2], usdc, 6), ClaimedNative: num(sums[3], unit, 18),
			ClaimedUSDC: num(sums[4], usdc, 6)}
		if price != nil {
			o.Price = number(price, 18)
		}
		out = append(out, o)
	}
	slices.Reverse(out) // newest first
	return &api.Response{Body: out, Freshness: fresh}, nil
}
