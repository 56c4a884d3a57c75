package dex

import (
	"context"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/api"
)

// Operation ids of the rewards received endpoints.
const (
	rewardDenomsSQL = `SELECT denom FROM osmosis_rewards_received_daily WHERE chain_id = ? AND address = ? GROUP BY denom
		HAVING sum(amount) > 0 ORDER BY denom`
)

// rewardDenoms lists the denoms in which the address received rewards
// (dex_rewards_received job); an address without any gets an empty list.
func (s *Service) rewardDenoms(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	denoms := []string{}
	if err := api.Reader(ctx, s.db).NewRaw(rewardDenomsSQL, s.market.ChainID, req.Params.String("address")).Scan(ctx, &denoms); err != nil {
		return nil, fmt.Errorf("reward denoms: %w", err)
	}
	return &api.Response{Body: struct {
		Denoms []string `json:"denoms"`
	}{denoms}, Freshness: fresh}, nil
}

// RewardDay is one day of rewards received in a denom, by source, in base
// units.
type RewardDay struct {
	Timestamp     string `json:"timestamp"`
	CLAmount      string `json:"cl_amount"`
	GammAmount    string `json:"gamm_amount"`
	StakingAmount string `json:"staking_amount"`
}

// rewardsByDay lists, oldest first, the UTC days on which the address
// received rewards in denom, split by source (dex_rewards_received job).
func (s *Service) rewardsByDay(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Day     time.Time `bun:"day"`
		CL      string    `bun:"cl"`
		Gamm    string    `bun:"gamm"`
		Staking string    `bun:"staking"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day,
			coalesce(sum(amount) FILTER (WHERE source = 'cl'), 0)::text AS cl,
			coalesce(sum(amount) FILTER (WHERE source = 'gamm'), 0)::text AS gamm,
			coalesce(sum(amount) FILTER (WHERE source = 'staking'), 0)::text AS staking
		FROM osmosis_rewards_received_daily WHERE chain_id = ? AND address = ? AND denom = ?
		GROUP BY day ORDER BY day`, s.market.ChainID, req.Params.String("address"), req.Params.String("denom")).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("rewards by day: %w", err)
	}
	out := make([]RewardDay, 0, len(rows))
	for _, r := range rows {
		out = append(out, RewardDay{Timestamp: r.Day.UTC().Format(time.DateTime), CLAmount: r.CL, GammAmount: r.Gamm, StakingAmount: r.Staking})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
