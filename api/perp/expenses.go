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

// expenseDestinations are the destinations of the treasury outflows.
var expenseDestinations = []string{"trading_rewards", "grants", "validators", "other"}

// dailyExpenses returns the USD value of the treasury outflows of each day
// of bs by destination (perp_treasury_outflows_daily): USDC as is, NATIVE at
// the day's last oracle price; other denoms are not valued. NATIVE without
// a price is 503.
func (s *Service) dailyExpenses(ctx context.Context, bs []time.Time) (map[time.Time]map[string]*big.Rat, error) {
	out := map[time.Time]map[string]*big.Rat{}
	if len(bs) == 0 {
		return out, nil
	}
	var rows []struct {
		Day         time.Time `bun:"day"`
		Destination string    `bun:"destination"`
		USD         *string   `bun:"usd"`
		Missing     bool      `bun:"missing"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`WITH n AS (
			SELECT denom, decimals, market_id, quote_denom FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1
		), m AS (
			SELECT d.exponent FROM dydx_markets d, n WHERE d.chain_id = ?0 AND d.market_id = n.market_id ORDER BY d.height DESC LIMIT 1
		), v AS (
			SELECT o.day, o.destination, o.denom = n.denom AS native, CASE
				WHEN o.denom = n.quote_denom THEN o.amount * 0.000001
				WHEN o.denom = n.denom THEN o.amount * ('1e' || (m.exponent - n.decimals))::numeric * (
					SELECT p.price FROM perp_price_hourly p WHERE p.chain_id = ?0 AND p.market_id = n.market_id
						AND p.hour < o.day + interval '24 hours' ORDER BY p.hour DESC LIMIT 1) END AS usd
			FROM perp_treasury_outflows_daily o CROSS JOIN n LEFT JOIN m ON true
			WHERE o.chain_id = ?0 AND o.day >= ?1 AND o.day <= ?2 AND o.denom IN (n.denom, n.quote_denom)
		)
		SELECT day, destination, sum(usd)::text AS usd, bool_or(native AND usd IS NULL) AS missing FROM v GROUP BY 1, 2`,
		s.chainID, bs[0], bs[len(bs)-1]).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("treasury outflows: %w", err)
	}
	for _, r := range rows {
		if r.Missing || r.USD == nil {
			return nil, fmt.Errorf("no oracle price of the native token by the end of %s: %w", r.Day.UTC().Format(time.DateOnly), problem.ErrNotIndexed)
		}
		v, err := rat(*r.USD)
		if err != nil {
			return nil, err
		}
		d := r.Day.UTC()
		if out[d] == nil {
			out[d] = map[string]*big.Rat{}
		}
		out[d][r.Destination] = v
	}
	return out, nil
}

// expensesShare is the generic lens series of the treasury outflows in USD
// per day: one column per requested destination, total for all of them
// (grants are the receipts of config perp.grant_recipients).
func (s *Service) expensesShare(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "day", report.PriceHourly, report.TreasuryOutflowsDaily)
	if err != nil {
		return nil, err
	}
	exp, err := s.dailyExpenses(ctx, bs)
	if err != nil {
		return nil, err
	}
	cols := req.Params.Strings("destinations")
	out := make([]api.SeriesRow, len(bs))
	for i, b := range bs {
		row := api.SeriesRow{Labels: b.Format(time.DateTime), Columns: cols, Values: make([]json.Number, len(cols))}
		for k, c := range cols {
			v := new(big.Rat)
			for _, d := range expenseDestinations {
				if x := exp[b][d]; x != nil && (c == "total" || c == d) {
					v.Add(v, x)
				}
			}
			row.Values[k] = api.Number(v.FloatString(18))
		}
		out[i] = row
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// pnlSummary is, per day, the revenue (perp_revenue_daily: trading and tx
// fees), the treasury expenses (the total of expenses_share_by_destination)
// and their difference, in USD.
func (s *Service) pnlSummary(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "day", report.PriceHourly, report.RevenueDaily, report.TreasuryOutflowsDaily)
	if err != nil {
		return nil, err
	}
	type row struct {
		Labels   string      `json:"labels"`
		Revenue  json.Number `json:"revenue"`
		Expenses json.Number `json:"expenses"`
		PnL      json.Number `json:"pnl"`
	}
	out := make([]row, 0, len(bs))
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	exp, err := s.dailyExpenses(ctx, bs)
	if err != nil {
		return nil, err
	}
	var revs []struct {
		Day    time.Time `bun:"day"`
		Amount string    `bun:"amount"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, sum(amount)::text AS amount FROM perp_revenue_daily WHERE chain_id = ? AND day >= ? AND day <= ?
		GROUP BY day`, s.chainID, bs[0], bs[len(bs)-1]).Scan(ctx, &revs); err != nil {
		return nil, fmt.Errorf("revenue: %w", err)
	}
	revenue := map[time.Time]*big.Rat{}
	for _, r := range revs {
		if revenue[r.Day.UTC()], err = rat(r.Amount); err != nil {
			return nil, err
		}
	}
	for _, b := range bs {
		rev, spent := new(big.Rat), new(big.Rat)
		if r := revenue[b]; r != nil {
			rev.Set(r)
		}
		for _, x := range exp[b] {
			spent.Add(spent, x)
		}
		out = append(out, row{Labels: b.Format(time.DateTime), Revenue: api.Number(rev.FloatString(18)), Expenses: api.Number(spent.FloatString(18)),
			PnL: api.Number(new(big.Rat).Sub(rev, spent).FloatString(18))})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
