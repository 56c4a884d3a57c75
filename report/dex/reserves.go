package dex

import (
	"context"
	"fmt"
	"strings"
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
	return reservesAt(ctx, db, chainID, ts, nil)
}

// PoolReservesAt is ReservesAt for the given pools only: an answer that
// shows a page of pools reads the page's reserves, not every pool's.
func PoolReservesAt(ctx context.Context, db bun.IDB, chainID string, ts []time.Time, pools []int64) ([]Reserve, error) {
	if len(pools) == 0 {
		return nil, nil
	}
	return reservesAt(ctx, db, chainID, ts, pools)
}

// reservesAt reads the reserves of every pool (pools nil) or of pools.
func reservesAt(ctx context.Context, db bun.IDB, chainID string, ts []time.Time, pools []int64) ([]Reserve, error) {
	filter := ""
	if pools != nil {
		filter = " AND l.pool_id = ANY(?2::bigint[])"
	}
	var out []Reserve
	if err := db.NewRaw(`SELECT i, pool_id, denom, amount FROM (
			SELECT t.i - 1 AS i, l.pool_id, l.denom, CASE WHEN l.hour <= t.at THEN l.amount::text
				ELSE (SELECT r.amount::text FROM `+PoolReserves+` r WHERE r.chain_id = l.chain_id AND r.pool_id = l.pool_id AND r.denom = l.denom
					AND r.hour <= t.at ORDER BY r.hour DESC LIMIT 1) END AS amount
			FROM `+PoolReservesLatest+` l CROSS JOIN unnest(?1::timestamptz[]) WITH ORDINALITY t(at, i)
			WHERE l.chain_id = ?0`+filter+` OFFSET 0) x -- the fence: each probe runs once, not again in the filter
		WHERE amount IS NOT NULL ORDER BY pool_id, denom, i`, chainID, pgdialect.Array(ts), pgdialect.Array(pools)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("pool reserves: %w", err)
	}
	return out, nil
}

// KeepLatestReserves brings PoolReservesLatest up to date with
// PoolReserves after the job rewrote its rows from hour h0 on, in the
// job's transaction (keepLatest).
func KeepLatestReserves(ctx context.Context, tx bun.Tx, chainID string, h0 time.Time) error {
	return keepLatest(ctx, tx, PoolReserves, PoolReservesLatest, []string{"pool_id", "denom"}, []string{"bigint", "text"}, "amount", chainID, h0)
}

// keepLatest brings latest (a row per key: the key's latest row of
// hourly, with its hour and value) up to date after hourly was rewritten
// from hour h0 on: the keys whose latest row was at or after h0, and those
// with rows from h0, take their latest row again (none left: no row).
// keys are the key columns (after chain_id) and their SQL types.
func keepLatest(ctx context.Context, tx bun.Tx, hourly, latest string, keys, types []string, value, chainID string, h0 time.Time) error {
	cols := strings.Join(keys, ", ")
	rows, err := tx.QueryContext(ctx, "DELETE FROM "+latest+" WHERE chain_id = ? AND hour >= ? RETURNING "+castAll(keys, "text"), chainID, h0)
	if err != nil {
		return fmt.Errorf("%s: %w", latest, err)
	}
	gone := make([][]string, len(keys))
	for rows.Next() {
		vals := make([]string, len(keys))
		ptrs := make([]any, len(keys))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return fmt.Errorf("%s: %w", latest, err)
		}
		for i, v := range vals {
			gone[i] = append(gone[i], v)
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("%s: %w", latest, err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", latest, err)
	}
	args := []any{chainID, h0}
	unnest := make([]string, len(keys))
	match := make([]string, len(keys))
	for i, k := range keys {
		args = append(args, pgdialect.Array(gone[i]))
		unnest[i] = fmt.Sprintf("?%d::text[]", i+2)
		match[i] = fmt.Sprintf("h.%s = k.%s", k, k)
	}
	if _, err := tx.NewRaw(`INSERT INTO `+latest+` (chain_id, `+cols+`, hour, `+value+`)
		SELECT ?0, `+prefixAll("k.", keys)+`, r.hour, r.`+value+` FROM (
			SELECT DISTINCT `+cols+` FROM `+hourly+` WHERE chain_id = ?0 AND hour >= ?1
			UNION SELECT `+castUnnest(len(keys), types)+` FROM unnest(`+strings.Join(unnest, ", ")+`) AS g(`+unnestCols(len(keys))+`)) AS k(`+cols+`)
		CROSS JOIN LATERAL (SELECT hour, `+value+` FROM `+hourly+` h WHERE h.chain_id = ?0 AND `+strings.Join(match, " AND ")+`
			ORDER BY hour DESC LIMIT 1) r
		ON CONFLICT (chain_id, `+cols+`) DO UPDATE SET hour = EXCLUDED.hour, `+value+` = EXCLUDED.`+value,
		args...).Exec(ctx); err != nil {
		return fmt.Errorf("%s: %w", latest, err)
	}
	return nil
}

func castAll(cols []string, typ string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c + "::" + typ
	}
	return strings.Join(out, ", ")
}

func prefixAll(prefix string, cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = prefix + c
	}
	return strings.Join(out, ", ")
}

// unnestCols names the columns of an unnest of n arrays g1..gn, and
// castUnnest casts them back to the key types.
func unnestCols(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("g%d", i+1)
	}
	return strings.Join(out, ", ")
}

func castUnnest(n int, types []string) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("g%d::%s", i+1, types[i])
	}
	return strings.Join(out, ", ")
}
