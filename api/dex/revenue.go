package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/api"
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
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, source, amount_usd::text AS amount FROM osmosis_revenue_daily
		WHERE chain_id = ? AND day >= ? AND day <= ? ORDER BY day, source`, s.market.ChainID, r.Start, r.End).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("chain revenue: %w", err)
	}
	out := make([]RevenueRow, len(rows))
	for i, row := range rows {
		out[i] = RevenueRow{Labels: row.Day.UTC().Format(time.DateTime), Source: row.Source, Amount: api.Number(row.Amount)}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// cumulativeProtocolRevenue is the all-time USD protocol revenue (every
// source of osmosis_revenue_daily) at the end of each day of the history.
func (s *Service) cumulativeProtocolRevenue(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.beginJob(ctx, report.JobRevenue)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Day    time.Time `bun:"day"`
		Amount string    `bun:"amount"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, sum(amount_usd)::text AS amount FROM osmosis_revenue_daily WHERE chain_id = ?
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
		out = append(out, KPI{Labels: d.Format(time.DateTime), Value: api.Number(cum.String())})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// cumulativeSupplySideRevenue is the all-time USD swap fees paid to
// liquidity providers at the end of each day of the series (Service.days:
// from the chain's first indexed day to the dex_volume job's last; 0
// before the first swap):
// each pool's daily USD volume (osmosis_pool_volume_daily, the sum of
// osmosis_pool_volume_hourly kept by the dex_volume job) times its swap fee
// rate (spread factor for concentrated pools), as
// /fees/v1/pools counts fees (each day rounded to 18 decimals); pools whose
// rate is unknown add nothing.
func (s *Service) cumulativeSupplySideRevenue(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, days, err := s.days(ctx, req, report.JobVolume)
	if err != nil {
		return nil, err
	}
	if len(days) == 0 {
		return &api.Response{Body: []KPI{}, Freshness: fresh}, nil
	}
	last := days[len(days)-1]
	// The running all-time sum of the daily fees (each rounded to 18
	// decimals) at each day with volume.
	var daily []cumulative
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, sum(fees) OVER (ORDER BY day)::text AS cum FROM (
			SELECT v.day, round(coalesce(sum(v.volume_usd * p.swap_fee), 0), 18) AS fees
			FROM osmosis_pool_volume_daily v JOIN osmosis_known_pools p ON p.chain_id = v.chain_id AND p.pool_id = v.pool_id
			WHERE v.chain_id = ? AND v.day < ? GROUP BY 1) f ORDER BY day`, s.market.ChainID, last.Add(day)).Scan(ctx, &daily); err != nil {
		return nil, fmt.Errorf("daily swap fees: %w", err)
	}
	return &api.Response{Body: cumulativeKPI(daily, days), Freshness: fresh}, nil
}
