package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/api"
)

// Revenue operations.
const (
	OpChainRevenue        = "GET /tokenomics/chain_revenue"
	OpCumulativeProtocolR = "GET /kpi/cumulative_protocol_revenue"
)

// RevenueRow is one day and source of chain revenue.
type RevenueRow struct {
	Labels string      `json:"labels"`
	Source string      `json:"source"`
	Amount json.Number `json:"amount"`
}

// chainRevenue lists the USD revenue per day and source in the date range
// (osmosis_revenue_daily, built by the dex_revenue job), oldest first.
func (s *Service) chainRevenue(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	r, err := req.Params.DateRange(req.Now, false)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Day    time.Time `bun:"day"`
		Source string    `bun:"source"`
		Amount string    `bun:"amount"`
	}
	if err := s.db.NewRaw(`SELECT day, source, amount_usd::text AS amount FROM osmosis_revenue_daily
		WHERE chain_id = ? AND day >= ? AND day <= ? ORDER BY day, source`, s.market.ChainID, r.Start, r.End).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("chain revenue: %w", err)
	}
	out := make([]RevenueRow, len(rows))
	for i, row := range rows {
		out[i] = RevenueRow{Labels: row.Day.UTC().Format(time.DateTime), Source: row.Source, Amount: Number(row.Amount)}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// cumulativeProtocolRevenue is the all-time USD protocol revenue (every
// source of osmosis_revenue_daily) at the end of each day of the history.
func (s *Service) cumulativeProtocolRevenue(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Day    time.Time `bun:"day"`
		Amount string    `bun:"amount"`
	}
	if err := s.db.NewRaw(`SELECT day, sum(amount_usd)::text AS amount FROM osmosis_revenue_daily WHERE chain_id = ?
		GROUP BY day ORDER BY day`, s.market.ChainID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("protocol revenue: %w", err)
	}
	out := []KPI{}
	if len(rows) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	last := fresh.Chains[0].Time.UTC().Truncate(day)
	cum, i := math.LegacyZeroDec(), 0
	for d := rows[0].Day.UTC(); !d.After(last); d = d.Add(day) {
		for ; i < len(rows) && !rows[i].Day.UTC().After(d); i++ {
			v, err := math.LegacyNewDecFromStr(rows[i].Amount)
			if err != nil {
				return nil, fmt.Errorf("revenue of %s: %w", rows[i].Day, err)
			}
			cum = cum.Add(v)
		}
		out = append(out, KPI{Labels: d.Format(time.DateTime), Value: Number(cum.String())})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
