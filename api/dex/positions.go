package dex

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// Coin is a base-unit amount of a denom.
type Coin struct {
	Denom  string `json:"denom"`
	Amount string `json:"amount"`
}

// PositionAsset is a deposited coin and its USD value then.
type PositionAsset struct {
	Denom  string      `json:"denom"`
	Amount string      `json:"amount"`
	Value  json.Number `json:"value"`
}

// PositionRef identifies a position and its range.
type PositionRef struct {
	PositionID int64 `json:"position_id"`
	PoolID     int64 `json:"pool_id"`
	LowerTick  int64 `json:"lower_tick"`
	UpperTick  int64 `json:"upper_tick"`
}

// Principal is the action that created a position id.
type Principal struct {
	Action   string          `json:"action"`
	Address  string          `json:"address"`
	TxHash   string          `json:"tx_hash"`
	Block    int64           `json:"block"`
	TxTime   string          `json:"tx_time"`
	Value    json.Number     `json:"value"`
	Position PositionRef     `json:"position"`
	Assets   []PositionAsset `json:"assets"`
}

// PositionInfo is the position info answer.
type PositionInfo struct {
	TotalSpreadRewards     []Coin    `json:"total_spread_rewards"`
	TotalIncentivesRewards []Coin    `json:"total_incentives_rewards"`
	TotalForfeitRewards    []Coin    `json:"total_forfeit_rewards"`
	Principal              Principal `json:"principal"`
}

// position answers a position id from osmosis_position_principals and
// osmosis_position_rewards (dex_positions job). The principal's value is
// each deposited amount at its denom's hourly close of the hour of the
// action (the latest close before, when that hour has none; 0 for a denom
// never priced), as the dex_revenue job values payments. Unknown id → 404.
func (s *Service) position(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	id, err := strconv.ParseInt(req.Params.String("positionId"), 10, 64)
	if err != nil || id < 0 {
		return nil, problem.BadParam("positionId", "must be a position id (digits)")
	}
	var p struct {
		PoolID    int64     `bun:"pool_id"`
		Action    string    `bun:"action"`
		Address   string    `bun:"address"`
		Height    int64     `bun:"height"`
		TxHash    string    `bun:"tx_hash"`
		Time      time.Time `bun:"time"`
		LowerTick int64     `bun:"lower_tick"`
		UpperTick int64     `bun:"upper_tick"`
		Denom0    string    `bun:"denom0"`
		Amount0   string    `bun:"amount0"`
		Denom1    string    `bun:"denom1"`
		Amount1   string    `bun:"amount1"`
		Price0    *string   `bun:"price0"`
		Price1    *string   `bun:"price1"`
	}
	err = api.Reader(ctx, s.db).NewRaw(`SELECT p.pool_id, p.action, p.address, p.height, p.tx_hash, p.time, p.lower_tick, p.upper_tick,
			p.denom0, p.amount0::text AS amount0, p.denom1, p.amount1::text AS amount1,
			(SELECT price_usd::text FROM osmosis_asset_prices WHERE chain_id = p.chain_id AND denom = p.denom0
				AND hour <= date_trunc('hour', p.time) ORDER BY hour DESC LIMIT 1) AS price0,
			(SELECT price_usd::text FROM osmosis_asset_prices WHERE chain_id = p.chain_id AND denom = p.denom1
				AND hour <= date_trunc('hour', p.time) ORDER BY hour DESC LIMIT 1) AS price1
		FROM osmosis_position_principals p WHERE p.chain_id = ? AND p.position_id = ?`, s.market.ChainID, id).Scan(ctx, &p)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, problem.Status(http.StatusNotFound, "position %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("position %d: %w", id, err)
	}
	out := PositionInfo{TotalSpreadRewards: []Coin{}, TotalIncentivesRewards: []Coin{}, TotalForfeitRewards: []Coin{},
		Principal: Principal{Action: p.Action, Address: p.Address, TxHash: p.TxHash, Block: p.Height,
			TxTime:   p.Time.UTC().Format(time.DateTime),
			Position: PositionRef{PositionID: id, PoolID: p.PoolID, LowerTick: p.LowerTick, UpperTick: p.UpperTick}}}
	total := math.LegacyZeroDec()
	for _, a := range []struct{ denom, amount string }{{p.Denom0, p.Amount0}, {p.Denom1, p.Amount1}} {
		var price *string
		if a.denom == p.Denom0 {
			price = p.Price0
		} else {
			price = p.Price1
		}
		value := math.LegacyZeroDec()
		amt, ok := math.NewIntFromString(a.amount)
		if !ok {
			return nil, fmt.Errorf("position %d: amount %q", id, a.amount)
		}
		if price != nil {
			pr, err := math.LegacyNewDecFromStr(*price)
			if err != nil {
				return nil, fmt.Errorf("position %d: price %q: %w", id, *price, err)
			}
			value = s.market.USDValue(a.denom, amt, pr)
		}
		total = total.Add(value)
		out.Principal.Assets = append(out.Principal.Assets, PositionAsset{Denom: a.denom, Amount: a.amount, Value: api.Number(value.String())})
	}
	out.Principal.Value = api.Number(total.String())

	var rewards []struct {
		Kind   string `bun:"kind"`
		Denom  string `bun:"denom"`
		Amount string `bun:"amount"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT kind, denom, amount::text AS amount FROM osmosis_position_rewards
		WHERE chain_id = ? AND position_id = ? AND amount > 0 ORDER BY kind, denom`, s.market.ChainID, id).Scan(ctx, &rewards); err != nil {
		return nil, fmt.Errorf("rewards of position %d: %w", id, err)
	}
	for _, r := range rewards {
		c := Coin{Denom: r.Denom, Amount: r.Amount}
		switch r.Kind {
		case "spread":
			out.TotalSpreadRewards = append(out.TotalSpreadRewards, c)
		case "incentives":
			out.TotalIncentivesRewards = append(out.TotalIncentivesRewards, c)
		case "forfeit":
			out.TotalForfeitRewards = append(out.TotalForfeitRewards, c)
		}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
