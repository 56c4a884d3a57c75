package dex

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// PoolReserves is the table of every pool's reserves at the end of each
// hour in which they changed (the dex_liquidity job, JobLiquidity).
const PoolReserves = "osmosis_pool_reserves_hourly"

// Reserve is a pool's reserve of a denom at the I-th of the times asked
// for, in base units.
type Reserve struct {
	I      int    `bun:"i"`
	PoolID int64  `bun:"pool_id"`
	Denom  string `bun:"denom"`
	Amount string `bun:"amount"`
}

// PoolReservesLatest holds each (pool, denom) key's latest row of
// PoolReserves, kept with it by the dex_liquidity job (KeepLatestReserves).
const PoolReservesLatest = "osmosis_pool_reserves_latest"

// ReservesAt is every pool's reserve of each denom at each of ts: its row
// of the latest hour at or before t (a pool without a row by then has no
// reserve), in the order of pool, denom and time. The keys and their
// latest rows are PoolReservesLatest's; a time before a key's latest row
// is one backward probe of the primary key: the cost follows the pools,
// never the hours of history.
func ReservesAt(ctx context.Context, db bun.IDB, chainID string, ts []time.Time) ([]Reserve, error) {
	var out []Reserve
	if err := db.NewRaw(`SELECT i, pool_id, denom, amount FROM (
			SELECT t.i - 1 AS i, l.pool_id, l.denom, CASE WHEN l.hour <= t.at THEN l.amount::text
				ELSE (SELECT r.amount::text FROM `+PoolReserves+` r WHERE r.chain_id = l.chain_id AND r.pool_id = l.pool_id AND r.denom = l.denom
					AND r.hour <= t.at ORDER BY r.hour DESC LIMIT 1) END AS amount
			FROM `+PoolReservesLatest+` l CROSS JOIN unnest(?1::timestamptz[]) WITH ORDINALITY t(at, i)
			WHERE l.chain_id = ?0) x
		WHERE amount IS NOT NULL ORDER BY pool_id, denom, i`, chainID, pgdialect.Array(ts)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("pool reserves: %w", err)
	}
	return out, nil
}

// KeepLatestReserves brings PoolReservesLatest up to date with
// PoolReserves after the job rewrote its rows from hour h0 on, in the
// job's transaction: the keys whose latest row was at or after h0, and
// those with rows from h0, take their latest row again.
func KeepLatestReserves(ctx context.Context, tx bun.Tx, chainID string, h0 time.Time) error {
	var gone []struct {
		PoolID int64  `bun:"pool_id"`
		Denom  string `bun:"denom"`
	}
	if err := tx.NewRaw("DELETE FROM "+PoolReservesLatest+" WHERE chain_id = ? AND hour >= ? RETURNING pool_id, denom",
		chainID, h0).Scan(ctx, &gone); err != nil {
		return fmt.Errorf("latest reserves: %w", err)
	}
	pools, denoms := make([]int64, len(gone)), make([]string, len(gone))
	for i, g := range gone {
		pools[i], denoms[i] = g.PoolID, g.Denom
	}
	if _, err := tx.NewRaw(`INSERT INTO `+PoolReservesLatest+` (chain_id, pool_id, denom, hour, amount)
		SELECT ?0, k.pool_id, k.denom, r.hour, r.amount FROM (
			SELECT DISTINCT pool_id, denom FROM `+PoolReserves+` WHERE chain_id = ?0 AND hour >= ?1
			UNION SELECT * FROM unnest(?2::bigint[], ?3::text[])) AS k(pool_id, denom)
		CROSS JOIN LATERAL (SELECT hour, amount FROM `+PoolReserves+` WHERE chain_id = ?0 AND pool_id = k.pool_id AND denom = k.denom
			ORDER BY hour DESC LIMIT 1) r
		ON CONFLICT (chain_id, pool_id, denom) DO UPDATE SET hour = EXCLUDED.hour, amount = EXCLUDED.amount`,
		chainID, h0, pgdialect.Array(pools), pgdialect.Array(denoms)).Exec(ctx); err != nil {
		return fmt.Errorf("latest reserves: %w", err)
	}
	return nil
}
