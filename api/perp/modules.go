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

// moduleColumns names the response column of each treasury module.
var moduleColumns = map[string]string{
	"community_treasury": "community_treasury", "community_vester": "community_treasury_vester",
	"rewards_treasury": "rewards_treasury", "rewards_vester": "rewards_treasury_vester",
}

// moduleAccounts is, per day in the range up to the day of the last
// aggregated block, the NATIVE balance of each treasury module account at
// the day's end (perp_module_balances_daily), in NATIVE or, with
// unit=dollar, in USD at the last oracle price of the native token's market
// that day (perp_price_hourly).
func (s *Service) moduleAccounts(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "day", report.ModuleBalancesDaily, report.PriceHourly)
	if err != nil {
		return nil, err
	}
	cols := make([]string, len(report.TreasuryModules))
	for i, m := range report.TreasuryModules {
		cols[i] = moduleColumns[m]
	}
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
		Account string    `bun:"account"`
		Day     time.Time `bun:"day"`
		Balance string    `bun:"balance"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT account, day, balance::text AS balance FROM perp_module_balances_daily
		WHERE chain_id = ? AND day < ? ORDER BY day`, s.chainID, end).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("module balances: %w", err)
	}
	dollar := req.Params.String("unit") == "dollar"
	var prices []change
	exponent := native.Exponent
	if dollar {
		if prices, err = s.changes(ctx, "perp_price_hourly", "market_id", "price", []int64{native.Market}, api.NextBucket(bs[0], "day"), end); err != nil {
			return nil, err
		}
	}
	balance := map[string]*big.Rat{}
	var price *big.Rat
	var i, j int
	for _, b := range bs {
		dayEnd := api.NextBucket(b, "day")
		for ; i < len(rows) && rows[i].Day.Before(dayEnd); i++ {
			if balance[rows[i].Account], err = rat(rows[i].Balance); err != nil {
				return nil, err
			}
		}
		for ; j < len(prices) && prices[j].Hour.Before(dayEnd); j++ {
			if price, err = rat(prices[j].Value); err != nil {
				return nil, err
			}
		}
		row := api.SeriesRow{Labels: b.Format(time.DateTime), Columns: cols, Values: make([]json.Number, len(cols))}
		for k, m := range report.TreasuryModules {
			v := new(big.Rat)
			if bal := balance[m]; bal != nil {
				v.Mul(bal, pow10(-native.Decimals))
			}
			if dollar {
				if price == nil {
					return nil, fmt.Errorf("no oracle price of the native token (market %d) by %s: %w", native.Market, dayEnd.Format(time.DateOnly), problem.ErrNotIndexed)
				}
				v.Mul(v, price)
				v.Mul(v, pow10(exponent))
				row.Values[k] = api.Number(v.FloatString(6))
			} else {
				row.Values[k] = api.Number(v.FloatString(int(native.Decimals)))
			}
		}
		out = append(out, row)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
