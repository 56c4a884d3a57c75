package perp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// stakingDay is one UTC day's staking figures: the NATIVE bonded to
// validators at its end (those bonded by their latest snapshot status), the native token's USD price then (nil without
// one), the staking rewards paid in it (USDC, and NATIVE), and the seconds
// of it the chain covers (from genesis or the first block to the last
// aggregated block).
type stakingDay struct {
	day          time.Time
	bonded       *big.Rat
	price        *big.Rat
	rewardsUSDC  *big.Rat
	rewardsNativ *big.Rat
	covered      int64
}

// apr is the day's rewards annualised over its covered seconds, divided by
// the USD value of the bonded NATIVE, in percent; nil when a price, bonded
// tokens or covered time is missing.
func apr(rewardsUSD, bondedUSD *big.Rat, covered int64) *big.Rat {
	if rewardsUSD == nil || bondedUSD == nil || bondedUSD.Sign() == 0 || covered <= 0 {
		return nil
	}
	v := new(big.Rat).Quo(rewardsUSD, bondedUSD)
	v.Mul(v, big.NewRat(365*86400*100, covered))
	return v
}

// usd values NATIVE at price plus USDC; nil when NATIVE is non-zero and
// there is no price.
func usd(usdc, native, price *big.Rat) *big.Rat {
	if native.Sign() != 0 && price == nil {
		return nil
	}
	v := new(big.Rat).Set(usdc)
	if native.Sign() != 0 {
		v.Add(v, new(big.Rat).Mul(native, price))
	}
	return v
}

// stakingDays reads the figures of the days from first through last
// (perp_validator_tokens_daily, perp_price_hourly, perp_staking_rewards_daily).
func (s *Service) stakingDays(ctx context.Context, first, last, tip time.Time) ([]stakingDay, error) {
	var native struct {
		Decimals int64     `bun:"decimals"`
		Market   int64     `bun:"market_id"`
		Exponent *int64    `bun:"exponent"`
		Start    time.Time `bun:"start"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT n.decimals, n.market_id, m.exponent,
			coalesce((SELECT genesis_time FROM genesis_imports WHERE chain_id = ?0),
				(SELECT time FROM blocks WHERE chain_id = ?0 ORDER BY height LIMIT 1)) AS start
		FROM (SELECT decimals, market_id FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1) n
		LEFT JOIN LATERAL (SELECT exponent FROM dydx_markets WHERE chain_id = ?0 AND market_id = n.market_id
			ORDER BY height DESC LIMIT 1) m ON true`, s.chainID).Scan(ctx, &native); err != nil {
		if _, err2 := s.nativeDecimals(ctx); err2 != nil {
			return nil, err2
		}
		return nil, fmt.Errorf("native token: %w", err)
	}
	end := api.NextBucket(last, "day")
	var tokens []struct {
		Validator string    `bun:"validator"`
		Day       time.Time `bun:"day"`
		Tokens    string    `bun:"tokens"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT validator, day, tokens::text AS tokens FROM perp_validator_tokens_daily
		WHERE chain_id = ? AND day < ? ORDER BY day`, s.chainID, end).Scan(ctx, &tokens); err != nil {
		return nil, fmt.Errorf("validator tokens: %w", err)
	}
	prices, err := s.changes(ctx, "perp_price_hourly", "market_id", "price", []int64{native.Market}, api.NextBucket(first, "day"), end)
	if err != nil {
		return nil, err
	}
	var rewards []struct {
		Day    time.Time `bun:"day"`
		USDC   string    `bun:"usdc"`
		Native string    `bun:"native"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, usdc::text AS usdc, native::text AS native FROM perp_staking_rewards_daily
		WHERE chain_id = ? AND day >= ? AND day < ?`, s.chainID, first, end).Scan(ctx, &rewards); err != nil {
		return nil, fmt.Errorf("staking rewards: %w", err)
	}
	unit := pow10(-native.Decimals)
	if native.Exponent == nil {
		prices = nil // the native token's market is not in the catalog: its prices cannot be read
	}
	byDay := map[time.Time][2]*big.Rat{}
	for _, r := range rewards {
		u, err := rat(r.USDC)
		if err != nil {
			return nil, err
		}
		n, err := rat(r.Native)
		if err != nil {
			return nil, err
		}
		byDay[r.Day.UTC()] = [2]*big.Rat{u, n.Mul(n, unit)}
	}
	status, err := s.loadBondStatus(ctx, end)
	if err != nil {
		return nil, err
	}
	held := map[string]*big.Rat{}
	var price *big.Rat
	var out []stakingDay
	i, j := 0, 0
	for d := first; !d.After(last); d = api.NextBucket(d, "day") {
		dayEnd := api.NextBucket(d, "day")
		status.until(dayEnd)
		for ; i < len(tokens) && tokens[i].Day.Before(dayEnd); i++ {
			v, err := rat(tokens[i].Tokens)
			if err != nil {
				return nil, err
			}
			held[tokens[i].Validator] = v
		}
		for ; j < len(prices) && prices[j].Hour.Before(dayEnd); j++ {
			v, err := rat(prices[j].Value)
			if err != nil {
				return nil, err
			}
			price = v.Mul(v, pow10(*native.Exponent))
		}
		bonded := new(big.Rat)
		for val, v := range held {
			if status.bonded(val) {
				bonded.Add(bonded, v)
			}
		}
		bonded.Mul(bonded, unit)
		from, to := d, dayEnd
		if native.Start.After(from) {
			from = native.Start
		}
		if tip.Before(to) {
			to = tip
		}
		sd := stakingDay{day: d, bonded: bonded, price: price, rewardsUSDC: new(big.Rat), rewardsNativ: new(big.Rat),
			covered: max(0, int64(to.Sub(from)/time.Second))}
		if r, ok := byDay[d]; ok {
			sd.rewardsUSDC, sd.rewardsNativ = r[0], r[1]
		}
		out = append(out, sd)
	}
	return out, nil
}

// dayAPR is one day's staking APR (nil when it cannot be computed).
func (d stakingDay) apr() *big.Rat {
	if d.price == nil {
		return nil
	}
	return apr(usd(d.rewardsUSDC, d.rewardsNativ, d.price), new(big.Rat).Mul(d.bonded, d.price), d.covered)
}

func number(r *big.Rat, digits int) *json.Number {
	if r == nil {
		return nil
	}
	n := api.Number(r.FloatString(digits))
	return &n
}

// stakingAPR is the staking APR now, in percent: the staking rewards of the
// 30 UTC days ending with the day of the last aggregated block (USDC, and
// NATIVE at that day's last price), annualised over the time those days
// cover, divided by the USD value of the NATIVE bonded at the last block.
func (s *Service) stakingAPR(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx, report.PriceHourly, report.StakingRewardsDaily, report.ValidatorStatus, report.ValidatorTokensDaily)
	if err != nil {
		return nil, err
	}
	tip := fresh.Chains[0].Time
	last := tip.Truncate(day)
	days, err := s.stakingDays(ctx, last.AddDate(0, 0, -29), last, tip)
	if err != nil {
		return nil, err
	}
	usdc, nat, rewards := new(big.Rat), new(big.Rat), new(big.Rat)
	var covered int64
	priced := true
	for _, d := range days {
		usdc.Add(usdc, d.rewardsUSDC)
		nat.Add(nat, d.rewardsNativ)
		covered += d.covered
		if v := usd(d.rewardsUSDC, d.rewardsNativ, d.price); v != nil && priced {
			rewards.Add(rewards, v)
		} else {
			priced = false
		}
	}
	now := days[len(days)-1]
	var value *big.Rat
	if priced && now.price != nil {
		value = apr(rewards, new(big.Rat).Mul(now.bonded, now.price), covered)
	}
	if value == nil {
		return nil, fmt.Errorf("the staking APR needs the native token's price and bonded tokens, not known yet: %w", problem.ErrNotIndexed)
	}
	out := map[string]any{"staking_apr": number(value, 6)}
	if req.Params.String("mode") == "debug" {
		out["components"] = map[string]any{"rewards_usdc_30d": number(usdc, 6), "rewards_native_30d": number(nat, 18),
			"bonded_native": number(now.bonded, 18), "price_native": number(now.price, 18)}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// stakingSupply is, per day in the range, the NATIVE bonded at its end, the
// day's staking APR, the protocol revenue (perp_revenue_daily: trading and
// tx fees, USDC), the traders seen by its end and, when perp.buystake_address
// is configured, the USDC deposited into the programme that day (USDC the
// address received from other accounts: perp_buystake_hourly.usdc_in; null
// otherwise). buybackFee and buybackFeeShare are null: the part of the
// revenue routed to the programme is no chain parameter or event (the
// programme is funded by transfers, counted as deposits).
func (s *Service) stakingSupply(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "day", report.BuyStakeHourly, report.PriceHourly, report.RevenueDaily, report.StakingRewardsDaily, report.ActivityBuckets, report.ValidatorStatus, report.ValidatorTokensDaily)
	if err != nil {
		return nil, err
	}
	type row struct {
		Labels          string       `json:"labels"`
		StakingSupply   *json.Number `json:"stakingSupply"`
		StakingAPR      *json.Number `json:"stakingApr"`
		ProtocolRevenue *json.Number `json:"protocolRevenue"`
		BuybackFee      *json.Number `json:"buybackFee"`
		BuybackShare    *json.Number `json:"buybackFeeShare"`
		BuybackDeposit  *json.Number `json:"buybackDeposit"`
		HistoricUsers   *json.Number `json:"historicUsers"`
	}
	out := []row{}
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	days, err := s.stakingDays(ctx, bs[0], bs[len(bs)-1], fresh.Chains[0].Time)
	if err != nil {
		return nil, err
	}
	var facts []struct {
		Day     time.Time `bun:"day"`
		Revenue string    `bun:"revenue"`
		Users   int64     `bun:"users"`
		Deposit string    `bun:"deposit"`
	}
	// The traders up to a day's end are the new traders of every day up
	// to it (perp_activity_buckets), summed once.
	if err := api.Reader(ctx, s.db).NewRaw(`WITH seen AS (
			SELECT bucket, sum(new_traders) OVER (ORDER BY bucket) AS total FROM perp_activity_buckets
			WHERE chain_id = ?0 AND resolution = 'day' AND bucket <= (SELECT max(x) FROM unnest(?1::timestamptz[]) AS x)
		)
		SELECT d AS day,
			coalesce((SELECT sum(amount) FROM perp_revenue_daily WHERE chain_id = ?0 AND day = d), 0)::text AS revenue,
			coalesce((SELECT total FROM seen WHERE bucket <= d ORDER BY bucket DESC LIMIT 1), 0)::bigint AS users,
			(coalesce((SELECT sum(usdc_in) FROM perp_buystake_hourly WHERE chain_id = ?0 AND address = ?2
				AND hour >= d AND hour < d + interval '24 hours'), 0) * 0.000001)::text AS deposit
		FROM unnest(?1::timestamptz[]) AS d`, s.chainID, pgTimes(bs), s.buyStakeAddress).Scan(ctx, &facts); err != nil {
		return nil, fmt.Errorf("revenue and traders: %w", err)
	}
	byDay := make(map[time.Time]int, len(facts))
	for i, f := range facts {
		byDay[f.Day.UTC()] = i
	}
	for _, d := range days {
		f := facts[byDay[d.day]]
		users := json.Number(fmt.Sprint(f.Users))
		rev := api.Number(f.Revenue)
		r := row{Labels: d.day.Format(time.DateTime), StakingSupply: number(d.bonded, 18), StakingAPR: number(d.apr(), 6),
			ProtocolRevenue: &rev, HistoricUsers: &users}
		if s.buyStakeAddress != "" {
			dep := api.Number(f.Deposit)
			r.BuybackDeposit = &dep
		}
		out = append(out, r)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// aprSplit is, per day in the range with a staking APR, the mean of the
// daily staking APRs (those that can be computed) of the trailing 1, 7 and
// 30 days.
func (s *Service) aprSplit(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "day", report.PriceHourly, report.StakingRewardsDaily, report.ValidatorStatus, report.ValidatorTokensDaily)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	days, err := s.stakingDays(ctx, bs[0].AddDate(0, 0, -29), bs[len(bs)-1], fresh.Chains[0].Time)
	if err != nil {
		return nil, err
	}
	aprs := make([]*big.Rat, len(days))
	for i, d := range days {
		aprs[i] = d.apr()
	}
	mean := func(end, n int) *json.Number {
		sum, k := new(big.Rat), int64(0)
		for i := max(0, end-n+1); i <= end; i++ {
			if aprs[i] != nil {
				sum.Add(sum, aprs[i])
				k++
			}
		}
		if k == 0 {
			return nil
		}
		return number(sum.Quo(sum, big.NewRat(k, 1)), 6)
	}
	for i := 29; i < len(days); i++ {
		if aprs[i] == nil {
			continue // a day without a computable APR (before the chain, or no price yet) has no row
		}
		out = append(out, map[string]any{"labels": days[i].day.Format(time.DateTime), "1d_trailing_avg": mean(i, 1),
			"7d_trailing_avg": mean(i, 7), "30d_trailing_avg": mean(i, 30)})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
