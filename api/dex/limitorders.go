package dex

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cosmos/cosmos-sdk/types/bech32"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"
	"github.com/chainlens/chainlens/config"
)

// LimitOrdersService answers the limit-order history from
// osmosis_limit_orders (dex_limit_orders job).
type LimitOrdersService struct{ *Service }

// NewLimitOrders returns the limit-order service of the dex chain.
func NewLimitOrders(cfg *config.Config, db *bun.DB) *LimitOrdersService {
	return &LimitOrdersService{Service: New(cfg, db)}
}

// Handlers binds the limit-order operation.
func (s *LimitOrdersService) Handlers() map[route.ID]api.Handler {
	return map[route.ID]api.Handler{route.DexClosedLimitOrders: s.closed}
}

// ClosedOrder is one closed limit order.
type ClosedOrder struct {
	PlaceTimestamp  string `json:"place_timestamp"`
	PlaceTxHash     string `json:"place_tx_hash"`
	OrderDenom      string `json:"order_denom"`
	OutputDenom     string `json:"output_denom"`
	Quantity        string `json:"quantity"`
	ClaimedQuantity string `json:"claimed_quantity"`
	TickID          string `json:"tick_id"`
	OrderID         string `json:"order_id"`
	OrderDirection  string `json:"order_direction"`
	Price           string `json:"price"`
	Status          string `json:"status"`
	Contract        string `json:"contract"`
}

// closed answers the address's fully claimed and cancelled orders, newest
// placement first; price is the tick's price (the concentrated-liquidity
// tick scheme the order book uses).
func (s *LimitOrdersService) closed(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	addr := req.Params.String("address")
	if prefix, _, err := bech32.DecodeAndConvert(addr); err != nil || prefix != s.market.Prefix {
		return nil, problem.BadParam("address", fmt.Sprintf("must be a %s1... address", s.market.Prefix))
	}
	var rows []struct {
		PlaceTime   time.Time `bun:"place_time"`
		TxHash      string    `bun:"place_tx_hash"`
		OrderDenom  string    `bun:"order_denom"`
		OutputDenom string    `bun:"output_denom"`
		Quantity    string    `bun:"quantity"`
		Claimed     string    `bun:"claimed_quantity"`
		TickID      int64     `bun:"tick_id"`
		OrderID     int64     `bun:"order_id"`
		Direction   string    `bun:"order_direction"`
		Status      string    `bun:"status"`
		Contract    string    `bun:"contract"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT place_time, place_tx_hash, order_denom, output_denom, quantity::text AS quantity,
			claimed_quantity::text AS claimed_quantity, tick_id, order_id, order_direction, status, contract
		FROM osmosis_limit_orders WHERE owner = ? AND chain_id = ? AND status IN ('fullyClaimed', 'cancelled')
		ORDER BY place_time DESC, place_height DESC, contract, order_id DESC`, addr, s.market.ChainID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("closed orders of %s: %w", addr, err)
	}
	out := make([]ClosedOrder, 0, len(rows))
	for _, r := range rows {
		out = append(out, ClosedOrder{
			PlaceTimestamp: r.PlaceTime.UTC().Format(time.DateTime), PlaceTxHash: r.TxHash, OrderDenom: r.OrderDenom,
			OutputDenom: r.OutputDenom, Quantity: r.Quantity, ClaimedQuantity: r.Claimed,
			TickID: strconv.FormatInt(r.TickID, 10), OrderID: strconv.FormatInt(r.OrderID, 10), OrderDirection: r.Direction,
			Price: clmath.PriceString(r.TickID), Status: r.Status, Contract: r.Contract,
		})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
