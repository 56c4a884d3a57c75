package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"github.com/chainlens/chainlens/api"
)

// AssetsInChain is the USD value of the chain's assets at the end of a day.
type AssetsInChain struct {
	Labels string      `json:"labels"`
	Value  json.Number `json:"assets_in_chain_usdc"`
}

// assetsInChain lists the days of the series (Service.days, dex_assets
// job) that have a value: the USD value of every priced denom's supply at
// the day's end (osmosis_assets_in_chain_daily), oldest first.
func (s *Service) assetsInChain(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, days, err := s.days(ctx, req, report.JobAssets)
	if err != nil {
		return nil, err
	}
	if len(days) == 0 {
		return &api.Response{Body: []AssetsInChain{}, Freshness: fresh}, nil
	}
	var rows []struct {
		Day   time.Time `bun:"day"`
		Value string    `bun:"value"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, value_usd::text AS value FROM osmosis_assets_in_chain_daily
		WHERE chain_id = ? AND day >= ? AND day <= ? ORDER BY day`, s.market.ChainID, days[0], days[len(days)-1]).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("assets in chain: %w", err)
	}
	out := make([]AssetsInChain, len(rows))
	for i, row := range rows {
		out[i] = AssetsInChain{Labels: row.Day.UTC().Format(time.DateTime), Value: api.Number(row.Value)}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
