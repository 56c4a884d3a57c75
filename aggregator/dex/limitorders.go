package dex

import (
	"context"
	"fmt"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"github.com/uptrace/bun"
)

// LimitOrders is the dex_limit_orders job: osmosis_limit_orders, one row
// per order-book limit order placed on an indexed height
// (osmosis_orderbook_events, chains/osmosis): its placement (owner, tick,
// direction, placed quantity and denoms, block time and tx hash), the sum
// of what its claims paid out, and its status: cancelled once a
// cancelLimit is seen, fullyClaimed once a limitClaimed says
// fully_claimed=true, open otherwise. Events of orders placed before the
// first indexed height are left out (their placement is unknown).
//
// Each run recomputes, from all their events up to the tip, the orders
// with an event after the watermark, so a rerun writes the same rows.
type LimitOrders struct{ Market report.Market }

// Name is the job name.
func (LimitOrders) Name() string { return report.JobLimitOrders }

// Version is the version of the job's rows (see aggregator.Job).
func (LimitOrders) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j LimitOrders) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_limit_orders"}, ChainID: j.Market.ChainID}
}

// Run advances the orders to the indexed tip.
func (j LimitOrders) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip, err := store.IndexedTip(ctx, tx, j.Market.ChainID)
	if err != nil || tip <= wm {
		return max(wm, tip), 0, err
	}
	res, err := tx.NewRaw(`INSERT INTO osmosis_limit_orders (chain_id, contract, order_id, owner, place_height, place_time, place_tx_hash,
			tick_id, order_direction, quantity, claimed_quantity, order_denom, output_denom, status, closed_height)
		SELECT p.chain_id, p.contract, p.order_id, p.owner, p.height, b.time, t.hash, p.tick_id, p.order_direction, p.quantity,
			coalesce(c.claimed, 0), p.order_denom, p.output_denom,
			CASE WHEN x.height IS NOT NULL THEN 'cancelled' WHEN c.full_height IS NOT NULL THEN 'fullyClaimed' ELSE 'open' END,
			coalesce(x.height, c.full_height)
		FROM osmosis_orderbook_events p
		JOIN blocks b ON b.chain_id = p.chain_id AND b.height = p.height
		JOIN txs t ON t.chain_id = p.chain_id AND t.height = p.height AND t.tx_index = p.tx_index
		LEFT JOIN LATERAL (SELECT sum(e.amount_claimed) AS claimed, min(e.height) FILTER (WHERE e.fully_claimed) AS full_height
			FROM osmosis_orderbook_events e WHERE e.chain_id = p.chain_id AND e.contract = p.contract AND e.order_id = p.order_id
				AND e.kind = 'claim' AND e.height <= ?2) c ON true
		LEFT JOIN LATERAL (SELECT min(e.height) AS height
			FROM osmosis_orderbook_events e WHERE e.chain_id = p.chain_id AND e.contract = p.contract AND e.order_id = p.order_id
				AND e.kind = 'cancel' AND e.height <= ?2) x ON true
		WHERE p.chain_id = ?0 AND p.kind = 'place' AND p.height <= ?2 AND (p.contract, p.order_id) IN
			(SELECT contract, order_id FROM osmosis_orderbook_events WHERE chain_id = ?0 AND height > ?1 AND height <= ?2)
		ON CONFLICT (chain_id, contract, order_id) DO UPDATE SET owner = EXCLUDED.owner, place_height = EXCLUDED.place_height,
			place_time = EXCLUDED.place_time, place_tx_hash = EXCLUDED.place_tx_hash, tick_id = EXCLUDED.tick_id,
			order_direction = EXCLUDED.order_direction, quantity = EXCLUDED.quantity, claimed_quantity = EXCLUDED.claimed_quantity,
			order_denom = EXCLUDED.order_denom, output_denom = EXCLUDED.output_denom, status = EXCLUDED.status,
			closed_height = EXCLUDED.closed_height`,
		j.Market.ChainID, wm, tip).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("limit orders: %w", err)
	}
	n, _ := res.RowsAffected()
	return tip, n, nil
}
