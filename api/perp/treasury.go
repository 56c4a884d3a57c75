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

// treasurySubDAO is, per UTC day of the range up to the day of the last
// aggregated block, the USD value at the day's end of what the configured
// treasury sub-DAO wallets hold (perp_wallet_daily), by category:
// native_liquid and native_staked (NATIVE held and delegated, at the day's
// last oracle price of the native token's market, perp_price_hourly), usdc
// (the quote denom, 1 USDC = 1 USD) and other (any other denom). The chain
// gives no price for other denoms: other is 0 while the wallets hold none
// and null while they hold some, and total (the sum) is then null too. A
// native amount before the first oracle price is null as well.
func (s *Service) treasurySubDAO(ctx context.Context, req *api.Request) (*api.Response, error) {
	if len(s.treasury) == 0 {
		return nil, problem.NotConfigured("perp.treasury_subdao", "no treasury sub-DAO wallet is configured")
	}
	fresh, bs, err := s.window(ctx, req, "day", report.PriceHourly, report.WalletDaily)
	if err != nil {
		return nil, err
	}
	cols := req.Params.Strings("balance_categories")
	out := []api.SeriesRow{}
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	native, err := s.nativeToken(ctx)
	if err != nil {
		return nil, err
	}
	end := api.NextBucket(bs[len(bs)-1], "day")
	var rows []struct {
		Day    time.Time `bun:"day"`
		Denom  string    `bun:"denom"`
		Liquid string    `bun:"liquid"`
		Staked string    `bun:"staked"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, denom, sum(liquid_delta)::text AS liquid, sum(staked_delta)::text AS staked
		FROM perp_wallet_daily WHERE chain_id = ? AND address = ANY(?) AND day < ? GROUP BY day, denom ORDER BY day, denom`,
		s.chainID, pgStrings(s.treasury), end).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("perp_wallet_daily: %w", err)
	}
	prices, err := s.changes(ctx, "perp_price_hourly", "market_id", "price", []int64{native.Market}, api.NextBucket(bs[0], "day"), end)
	if err != nil {
		return nil, err
	}
	liquid := map[string]*big.Rat{}
	staked := new(big.Rat)
	var price *big.Rat
	var i, j int
	for _, b := range bs {
		dayEnd := api.NextBucket(b, "day")
		for ; i < len(rows) && rows[i].Day.Before(dayEnd); i++ {
			l, err := rat(rows[i].Liquid)
			if err != nil {
				return nil, err
			}
			st, err := rat(rows[i].Staked)
			if err != nil {
				return nil, err
			}
			if liquid[rows[i].Denom] == nil {
				liquid[rows[i].Denom] = new(big.Rat)
			}
			liquid[rows[i].Denom].Add(liquid[rows[i].Denom], l)
			staked.Add(staked, st)
		}
		for ; j < len(prices) && prices[j].Hour.Before(dayEnd); j++ {
			if price, err = rat(prices[j].Value); err != nil {
				return nil, err
			}
			price.Mul(price, pow10(native.Exponent))
		}
		// nil = not known.
		usd := func(base *big.Rat) *big.Rat {
			if base == nil || base.Sign() == 0 {
				return new(big.Rat)
			}
			if price == nil {
				return nil
			}
			v := new(big.Rat).Mul(base, pow10(-native.Decimals))
			return v.Mul(v, price)
		}
		values := map[string]*big.Rat{"native_liquid": usd(liquid[native.Denom]), "native_staked": usd(staked), "usdc": new(big.Rat), "other": new(big.Rat)}
		if q := liquid[native.Quote]; q != nil {
			values["usdc"].Mul(q, pow10(-6))
		}
		for denom, amount := range liquid {
			if denom != native.Denom && denom != native.Quote && amount.Sign() != 0 {
				values["other"] = nil // no price for it
			}
		}
		total := new(big.Rat)
		for _, v := range values {
			if v == nil {
				total = nil
				break
			}
			total.Add(total, v)
		}
		values["total"] = total
		row := api.SeriesRow{Labels: b.Format(time.DateTime), Columns: cols, Values: make([]json.Number, len(cols))}
		for k, c := range cols {
			if v := values[c]; v != nil {
				row.Values[k] = api.Number(v.FloatString(6))
			} else {
				row.Values[k] = "null"
			}
		}
		out = append(out, row)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
