package dex

import (
	"context"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
)

// Liquidity is the dex_liquidity job: osmosis_pool_reserves_hourly (each
// pool's reserves at the end of every hour in which they changed: creation
// deposits, joins and exits, concentrated-liquidity positions, and every
// swap hop in and out) and osmosis_pool_liquidity_daily (the USD value of
// the reserves at the end of each day, at the day's last hourly prices).
//
// It follows the dex_prices job's watermark and recomputes whole hours (and
// days) from the first hour with a new change, so it is idempotent and exact.
type Liquidity struct{ Market report.Market }

// Name is the job name.
func (Liquidity) Name() string { return report.JobLiquidity }

// Upstream: the job values its rows with the prices job's prices, so it runs after
// it and never past it.
func (Liquidity) Upstream() []string { return []string{report.JobPrices} }

// Version is the version of the job's rows (see aggregator.Job).
func (Liquidity) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Liquidity) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_pool_liquidity_daily", "osmosis_pool_reserves_hourly"}, ChainID: j.Market.ChainID}
}

// changes are every reserve movement with its block time.
const changes = `
	SELECT l.pool_id, l.denom, l.delta, b.time, l.height FROM osmosis_pool_liquidity l
		JOIN blocks b ON b.chain_id = l.chain_id AND b.height = l.height WHERE l.chain_id = ?0
	UNION ALL SELECT c.pool_id, p.denoms[1], c.amount0, b.time, c.height FROM osmosis_cl_positions c
		JOIN osmosis_pools p ON p.chain_id = c.chain_id AND p.pool_id = c.pool_id
		JOIN blocks b ON b.chain_id = c.chain_id AND b.height = c.height WHERE c.chain_id = ?0
	UNION ALL SELECT c.pool_id, p.denoms[2], c.amount1, b.time, c.height FROM osmosis_cl_positions c
		JOIN osmosis_pools p ON p.chain_id = c.chain_id AND p.pool_id = c.pool_id
		JOIN blocks b ON b.chain_id = c.chain_id AND b.height = c.height WHERE c.chain_id = ?0
	UNION ALL SELECT pool_id, denom_in, amount_in, time, height FROM osmosis_swaps WHERE chain_id = ?0
	UNION ALL SELECT pool_id, denom_out, -amount_out, time, height FROM osmosis_swaps WHERE chain_id = ?0`

// Run advances reserves and daily liquidity to the prices job's watermark.
func (j Liquidity) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip := bound
	if tip <= wm {
		return wm, 0, nil
	}
	chain := j.Market.ChainID
	var first *time.Time
	if err := tx.NewRaw("SELECT min(time) FROM ("+changes+") c WHERE height > ?1 AND height <= ?2", chain, wm, tip).Scan(ctx, &first); err != nil {
		return 0, 0, fmt.Errorf("first new change: %w", err)
	}
	if first == nil {
		return tip, 0, nil
	}
	h0 := first.UTC().Truncate(time.Hour)
	if _, err := tx.NewRaw("DELETE FROM osmosis_pool_reserves_hourly WHERE chain_id = ? AND hour >= ?", chain, h0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete reserves: %w", err)
	}
	res, err := tx.NewRaw(`INSERT INTO osmosis_pool_reserves_hourly (chain_id, pool_id, denom, hour, amount)
		SELECT ?0, h.pool_id, h.denom, h.hour,
			coalesce(b.amount, 0) + sum(h.delta) OVER (PARTITION BY h.pool_id, h.denom ORDER BY h.hour)
		FROM (SELECT pool_id, denom, date_trunc('hour', time) AS hour, sum(delta) AS delta FROM (`+changes+`) c
			WHERE time >= ?1 AND height <= ?2 GROUP BY pool_id, denom, date_trunc('hour', time)) h
		LEFT JOIN (SELECT DISTINCT ON (pool_id, denom) pool_id, denom, amount FROM osmosis_pool_reserves_hourly
			WHERE chain_id = ?0 AND hour < ?1 ORDER BY pool_id, denom, hour DESC) b ON b.pool_id = h.pool_id AND b.denom = h.denom`,
		chain, h0, tip).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("insert reserves: %w", err)
	}
	reserveRows, _ := res.RowsAffected()
	days, err := j.daily(ctx, tx, h0.Truncate(24*time.Hour), tip)
	if err != nil {
		return 0, 0, err
	}
	return tip, reserveRows + days, nil
}

// daily recomputes the USD liquidity of every pool for each day from d0
// through the day of the block at height tip.
func (j Liquidity) daily(ctx context.Context, tx bun.Tx, d0 time.Time, tip int64) (int64, error) {
	chain := j.Market.ChainID
	var last time.Time
	if err := tx.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height = ?", chain, tip).Scan(ctx, &last); err != nil {
		return 0, fmt.Errorf("time of height %d: %w", tip, err)
	}
	if _, err := tx.NewRaw("DELETE FROM osmosis_pool_liquidity_daily WHERE chain_id = ? AND day >= ?", chain, d0).Exec(ctx); err != nil {
		return 0, fmt.Errorf("delete liquidity: %w", err)
	}
	var rows []liquidityRow
	for day := d0; !day.After(last.UTC()); day = day.Add(24 * time.Hour) {
		end := day.Add(24 * time.Hour)
		var reserves []struct {
			PoolID int64  `bun:"pool_id"`
			Denom  string `bun:"denom"`
			Amount string `bun:"amount"`
			Price  string `bun:"price"`
		}
		if err := tx.NewRaw(`SELECT r.pool_id, r.denom, r.amount::text AS amount, coalesce(p.price_usd::text, '') AS price
			FROM (SELECT DISTINCT ON (pool_id, denom) pool_id, denom, amount FROM osmosis_pool_reserves_hourly
				WHERE chain_id = ?0 AND hour < ?1 ORDER BY pool_id, denom, hour DESC) r
			LEFT JOIN LATERAL (SELECT price_usd FROM osmosis_asset_prices WHERE chain_id = ?0 AND denom = r.denom AND hour < ?1
				ORDER BY hour DESC LIMIT 1) p ON true
			ORDER BY r.pool_id, r.denom`, chain, end).Scan(ctx, &reserves); err != nil {
			return 0, fmt.Errorf("reserves on %s: %w", day.Format(time.DateOnly), err)
		}
		byPool := map[int64]math.LegacyDec{}
		var order []int64
		for _, r := range reserves {
			if _, ok := byPool[r.PoolID]; !ok {
				byPool[r.PoolID] = math.LegacyZeroDec()
				order = append(order, r.PoolID)
			}
			if r.Price == "" {
				continue // no price yet: the denom adds nothing
			}
			amt, ok := math.NewIntFromString(r.Amount)
			price, err := math.LegacyNewDecFromStr(r.Price)
			if !ok || err != nil {
				return 0, fmt.Errorf("reserve %s of pool %d: %q at %q", r.Denom, r.PoolID, r.Amount, r.Price)
			}
			byPool[r.PoolID] = byPool[r.PoolID].Add(j.Market.USDValue(r.Denom, amt, price))
		}
		for _, id := range order {
			rows = append(rows, liquidityRow{ChainID: chain, PoolID: id, Day: day, LiquidityUSD: byPool[id].String()})
		}
	}
	if err := insertBatches(ctx, tx, rows); err != nil {
		return 0, fmt.Errorf("insert liquidity: %w", err)
	}
	return int64(len(rows)), nil
}

// liquidityRow is a row of osmosis_pool_liquidity_daily.
type liquidityRow struct {
	bun.BaseModel `bun:"table:osmosis_pool_liquidity_daily"`
	ChainID       string    `bun:"chain_id"`
	PoolID        int64     `bun:"pool_id"`
	Day           time.Time `bun:"day"`
	LiquidityUSD  string    `bun:"liquidity_usd"`
}
