package dex

import (
	"context"
	"fmt"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"github.com/uptrace/bun"
)

// Positions is the dex_positions job: osmosis_position_principals (the
// action that created each concentrated-liquidity position id: a
// create_position, or the add_to_position that replaced an older position,
// with its sender, tx hash, time, range and deposited amounts) and
// osmosis_position_rewards (all-time spread rewards, incentives and forfeited
// incentives collected per position and denom). A position a late start
// imported has no principal: the state names neither its creation nor what
// was deposited; its rewards are those collected from the first indexed
// block on.
//
// Its watermark is the last indexed height it has read. Each run upserts the
// principals created in (watermark, tip] and recomputes the totals of every
// position with a new collect, from all its rows, so reruns give the same rows.
type Positions struct{ Market report.Market }

// Name is the job name.
func (Positions) Name() string { return report.JobPositions }

// Version is the version of the job's rows (see aggregator.Job).
func (Positions) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Positions) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_position_principals", "osmosis_position_rewards"}, ChainID: j.Market.ChainID}
}

// Run advances the position report to the indexed tip.
func (j Positions) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip, err := store.IndexedTip(ctx, tx, j.Market.ChainID)
	if err != nil || tip <= wm {
		return wm, 0, err
	}
	res, err := tx.NewRaw(`INSERT INTO osmosis_position_principals (chain_id, position_id, pool_id, action, address, height, tx_hash, time,
			lower_tick, upper_tick, denom0, amount0, denom1, amount1)
		SELECT DISTINCT ON (c.position_id) c.chain_id, c.position_id, c.pool_id,
			CASE WHEN a.new_position_id IS NULL THEN 'create_position' ELSE 'add_to_position' END,
			c.sender, c.height, coalesce(t.hash, ''), b.time, c.lower_tick, c.upper_tick, p.denoms[1], c.amount0, p.denoms[2], c.amount1
		FROM osmosis_cl_positions c
		JOIN blocks b ON b.chain_id = c.chain_id AND b.height = c.height
		JOIN osmosis_known_pools p ON p.chain_id = c.chain_id AND p.pool_id = c.pool_id
		LEFT JOIN txs t ON t.chain_id = c.chain_id AND t.height = c.height AND t.tx_index = c.tx_index
		LEFT JOIN osmosis_cl_adds a ON a.chain_id = c.chain_id AND a.height = c.height AND a.tx_index = c.tx_index
			AND a.new_position_id = c.position_id
		WHERE c.chain_id = ?0 AND c.kind = 'create' AND c.height > ?1 AND c.height <= ?2
		ORDER BY c.position_id, c.height DESC, c.tx_index DESC, c.event_index DESC
		ON CONFLICT (chain_id, position_id) DO UPDATE SET pool_id = EXCLUDED.pool_id, action = EXCLUDED.action,
			address = EXCLUDED.address, height = EXCLUDED.height, tx_hash = EXCLUDED.tx_hash, time = EXCLUDED.time,
			lower_tick = EXCLUDED.lower_tick, upper_tick = EXCLUDED.upper_tick, denom0 = EXCLUDED.denom0,
			amount0 = EXCLUDED.amount0, denom1 = EXCLUDED.denom1, amount1 = EXCLUDED.amount1`,
		j.Market.ChainID, wm, tip).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("position principals: %w", err)
	}
	principals, _ := res.RowsAffected()
	res, err = tx.NewRaw(`INSERT INTO osmosis_position_rewards (chain_id, position_id, kind, denom, amount)
		SELECT chain_id, position_id, kind, denom, sum(amount) FROM osmosis_cl_rewards
		WHERE chain_id = ?0 AND height <= ?2 AND position_id IN
			(SELECT position_id FROM osmosis_cl_rewards WHERE chain_id = ?0 AND height > ?1 AND height <= ?2)
		GROUP BY chain_id, position_id, kind, denom
		ON CONFLICT (chain_id, position_id, kind, denom) DO UPDATE SET amount = EXCLUDED.amount`,
		j.Market.ChainID, wm, tip).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("position rewards: %w", err)
	}
	rewards, _ := res.RowsAffected()
	return tip, principals + rewards, nil
}
