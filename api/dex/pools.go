package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chainlens/chainlens/api"
)

// OpPoolListings is the pool listing operation.
const OpPoolListings = "GET /aux/pool_listings"

// PoolListing is one pool of the filter menus.
type PoolListing struct {
	QueryKey    int64       `json:"query_key"`
	Name        string      `json:"name"`
	Type        string      `json:"type"`
	DailyVolume json.Number `json:"daily_volume"`
}

// poolListings lists every pool with its USD swap volume over the hourly
// buckets that overlap the last 24 hours (osmosis_pool_volume_hourly, built
// by the dex_volume job), busiest first. The name joins the symbols of the
// pool's denoms (the denom where no metadata is configured).
func (s *Service) poolListings(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	since := req.Now.UTC().Add(-24 * time.Hour).Truncate(time.Hour)
	var rows []struct {
		PoolID int64    `bun:"pool_id"`
		Type   string   `bun:"type"`
		Denoms []string `bun:"denoms,array"`
		Volume string   `bun:"volume"`
	}
	if err := s.db.NewRaw(`SELECT p.pool_id, p.type, p.denoms, coalesce(sum(v.volume_usd), 0)::text AS volume
		FROM osmosis_pools p
		LEFT JOIN osmosis_pool_volume_hourly v ON v.chain_id = p.chain_id AND v.pool_id = p.pool_id AND v.hour >= ?
		WHERE p.chain_id = ?
		GROUP BY p.pool_id, p.type, p.denoms
		ORDER BY coalesce(sum(v.volume_usd), 0) DESC, p.pool_id`, since, s.market.ChainID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("pool listings: %w", err)
	}
	out := make([]PoolListing, 0, len(rows))
	for _, r := range rows {
		names := make([]string, len(r.Denoms))
		for i, d := range r.Denoms {
			names[i] = d
			if a, ok := s.market.Assets[d]; ok && a.Symbol != "" {
				names[i] = a.Symbol
			}
		}
		out = append(out, PoolListing{QueryKey: r.PoolID, Name: strings.Join(names, "/"), Type: r.Type, DailyVolume: Number(r.Volume)})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
