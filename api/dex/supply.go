package dex

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/api"
)

// SupplyMetrics is the supply answer; with metric only that one is set.
type SupplyMetrics struct {
	LastUpdate        string       `json:"lastUpdate"`
	TotalSupply       *json.Number `json:"totalSupply,omitempty"`
	BurntSupply       *json.Number `json:"burntSupply,omitempty"`
	CirculatingSupply *json.Number `json:"circulatingSupply,omitempty"`
}

// supply answers the staking token's supply in display units from the
// latest osmosis_supply row (dex_supply job): total, burnt over the indexed
// history, and circulating = total − the community pool. lastUpdate is the
// time of the block the row is at. No row yet (no supply snapshot) → 503,
// of type not-configured naming snapshot_every when snapshots are off.
func (s *Service) supply(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	var row struct {
		Time      time.Time `bun:"time"`
		Denom     string    `bun:"denom"`
		Total     string    `bun:"total"`
		Burnt     string    `bun:"burnt"`
		Community string    `bun:"community_pool"`
	}
	err = api.Reader(ctx, s.db).NewRaw(`SELECT time, denom, total::text AS total, burnt::text AS burnt, community_pool::text AS community_pool
		FROM osmosis_supply WHERE chain_id = ? ORDER BY height DESC LIMIT 1`, s.market.ChainID).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, api.NoSnapshot(s.chain, "supply snapshot")
	}
	if err != nil {
		return nil, fmt.Errorf("supply: %w", err)
	}
	display := func(v string) (*json.Number, error) {
		n, ok := math.NewIntFromString(v)
		if !ok {
			return nil, fmt.Errorf("supply amount %q", v)
		}
		d := api.Number(math.LegacyNewDecFromInt(n).Quo(pow10(s.market.Exponent(row.Denom))).String())
		return &d, nil
	}
	total, ok1 := math.NewIntFromString(row.Total)
	community, ok2 := math.NewIntFromString(row.Community)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("supply row %q %q", row.Total, row.Community)
	}
	out := SupplyMetrics{LastUpdate: row.Time.UTC().Format(time.RFC3339)}
	metric := req.Params.String("metric")
	if metric == "" || metric == "totalSupply" {
		if out.TotalSupply, err = display(row.Total); err != nil {
			return nil, err
		}
	}
	if metric == "" || metric == "burntSupply" {
		if out.BurntSupply, err = display(row.Burnt); err != nil {
			return nil, err
		}
	}
	if metric == "" || metric == "circulatingSupply" {
		if out.CirculatingSupply, err = display(total.Sub(community).String()); err != nil {
			return nil, err
		}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
