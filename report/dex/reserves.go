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

// ReservesAt is every pool's reserve of each denom at each of ts: its row
// of the latest hour at or before t (a pool without a row by then has no
// reserve). A skip scan over the (pool, denom) keys, then one backward
// probe of the primary key per key and time: the cost follows the pools,
// never the hours of history.
func ReservesAt(ctx context.Context, db bun.IDB, chainID string, ts []time.Time) ([]Reserve, error) {
	var out []Reserve
	if err := db.NewRaw(`WITH RECURSIVE d AS (
			(SELECT pool_id, denom FROM `+PoolReserves+` WHERE chain_id = ?0 ORDER BY pool_id, denom LIMIT 1)
			UNION ALL
			SELECT n.pool_id, n.denom FROM d CROSS JOIN LATERAL (SELECT pool_id, denom FROM `+PoolReserves+`
				WHERE chain_id = ?0 AND (pool_id, denom) > (d.pool_id, d.denom) ORDER BY pool_id, denom LIMIT 1) n)
		SELECT t.i - 1 AS i, d.pool_id, d.denom, r.amount::text AS amount FROM d CROSS JOIN unnest(?1::timestamptz[]) WITH ORDINALITY t(at, i)
		CROSS JOIN LATERAL (SELECT amount FROM `+PoolReserves+` WHERE chain_id = ?0 AND pool_id = d.pool_id AND denom = d.denom
			AND hour <= t.at ORDER BY hour DESC LIMIT 1) r`, chainID, pgdialect.Array(ts)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("pool reserves: %w", err)
	}
	return out, nil
}
