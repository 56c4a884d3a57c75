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

// FundingRate is one bucket of /trading/funding_rate.
type FundingRate struct {
	Labels      string      `json:"labels"`
	FundingRate json.Number `json:"funding_rate"`
}

// fundingRate is, per bucket (granularity, default day) of the range up to
// the last aggregated block, the average 1-hour funding rate of one market
// in percent: the mean of the bucket's funding ticks' 8-hour rates (ppm)
// ÷ 8 ÷ 10^4 (perp_funding_ticks, replayed by the perp_funding_ticks job).
// Buckets without a tick are left out.
func (s *Service) fundingRate(ctx context.Context, req *api.Request) (*api.Response, error) {
	if req.Params.String("market") == "total" {
		return nil, problem.BadParam("market", "must be one market (a ticker or perpetual id): funding is per market, total is not accepted")
	}
	id, _, err := s.market(ctx, "market", req.Params.String("market"))
	if err != nil {
		return nil, err
	}
	res := req.Params.String("granularity")
	fresh, bs, err := s.window(ctx, req, res, report.FundingTicks)
	if err != nil {
		return nil, err
	}
	out := []FundingRate{}
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	var known bool
	if err := api.Reader(ctx, s.db).NewRaw("SELECT EXISTS (SELECT 1 FROM dydx_funding_params WHERE chain_id = ? AND perpetual_id = ?)", s.chainID, id).
		Scan(ctx, &known); err != nil {
		return nil, fmt.Errorf("dydx_funding_params: %w", err)
	}
	if !known {
		return nil, fmt.Errorf("perpetual %d: its funding parameters are not indexed (listed after genesis, or the chain was indexed before funding was): %w",
			id, problem.ErrNotIndexed)
	}
	var ticks []struct {
		Time time.Time `bun:"time"`
		Rate int64     `bun:"rate_ppm"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT time, rate_ppm FROM perp_funding_ticks WHERE chain_id = ? AND perpetual_id = ? AND time >= ? AND time < ?
		ORDER BY time`, s.chainID, id, bs[0], api.NextBucket(bs[len(bs)-1], res)).Scan(ctx, &ticks); err != nil {
		return nil, fmt.Errorf("perp_funding_ticks: %w", err)
	}
	var i int
	for _, b := range bs {
		end := api.NextBucket(b, res)
		var sum, n int64
		for ; i < len(ticks) && ticks[i].Time.Before(end); i++ {
			sum += ticks[i].Rate
			n++
		}
		if n == 0 {
			continue
		}
		// ppm per 8 hours → percent per hour: ÷ 8 ÷ 10^4.
		pct := new(big.Rat).SetFrac(big.NewInt(sum), big.NewInt(n*8*10_000))
		out = append(out, FundingRate{Labels: b.Format(time.DateTime), FundingRate: api.Number(pct.FloatString(10))})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
