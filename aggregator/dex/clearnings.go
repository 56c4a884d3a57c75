package dex

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	report "github.com/chainlens/chainlens/report/dex"
)

// CLEarnings is the dex_cl_earnings job: report.CLEarnings, what one unit
// of in-range liquidity of each concentrated-liquidity pool (the pools of
// osmosis_cl_pools) earned per hour: each osmosis_pool_rewards_hourly row
// (dex_pool_rewards) over the pool's liquidity in range at the hour's end
// (its last osmosis_cl_state_hourly row at or before the hour, dex_cl_state)
// with that row's tick, as Postgres's exact integer quotients in units of
// 10^-report.EarnedDigits USD. Hours without liquidity in range have no
// row.
//
// It follows both jobs' watermarks and rewrites whole hours from the hour of
// the first new block, which is where they rewrite theirs from.
type CLEarnings struct{ Market report.Market }

// Name is the job name.
func (CLEarnings) Name() string { return report.JobCLEarnings }

// Upstream: the earnings and the pools' states are the two jobs'.
func (CLEarnings) Upstream() []string { return []string{report.JobPoolRewards, report.JobCLState} }

// Version is the version of the job's rows (see aggregator.Job).
func (CLEarnings) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j CLEarnings) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{report.CLEarnings}, ChainID: j.Market.ChainID}
}

// Run advances the earnings to the upstream jobs' watermark.
func (j CLEarnings) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip := bound
	if tip <= wm {
		return wm, 0, nil
	}
	chain := j.Market.ChainID
	var first time.Time
	if err := tx.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height > ? ORDER BY height LIMIT 1", chain, wm).Scan(ctx, &first); err != nil {
		return 0, 0, fmt.Errorf("first new block: %w", err)
	}
	h0 := first.UTC().Truncate(time.Hour)
	if _, err := tx.NewRaw("DELETE FROM "+report.CLEarnings+" WHERE chain_id = ? AND hour >= ?", chain, h0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete earnings: %w", err)
	}
	// div is numeric's exact integer quotient, truncated toward zero.
	res, err := tx.NewRaw(`INSERT INTO `+report.CLEarnings+` (chain_id, pool_id, hour, tick, fees, native, boost)
		SELECT r.chain_id, r.pool_id, r.hour, s.tick, div(r.fees_usd * ?2::numeric, s.liquidity), div(r.native_usd * ?2::numeric, s.liquidity),
			div(r.boost_usd * ?2::numeric, s.liquidity)
		FROM `+report.PoolRewards+` r
		JOIN LATERAL (SELECT tick, liquidity FROM osmosis_cl_state_hourly s WHERE s.chain_id = r.chain_id AND s.pool_id = r.pool_id
			AND s.hour <= r.hour ORDER BY s.hour DESC LIMIT 1) s ON true
		WHERE r.chain_id = ?0 AND r.hour >= ?1 AND s.liquidity > 0
			AND r.pool_id IN (SELECT pool_id FROM osmosis_cl_pools WHERE chain_id = ?0)`, chain, h0, report.EarnedUnit.String()).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("earnings: %w", err)
	}
	n, _ := res.RowsAffected()
	return tip, n, nil
}
