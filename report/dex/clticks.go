package dex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/osmosis/clmath"
)

// The initialized ticks of the concentrated-liquidity pools, as the
// dex_cl_state job (JobCLState) keeps them: changes, not hourly copies.
//
//   - TickChanges: a pool's ticks whose net or gross liquidity changed in
//     an hour, with their values at the end of that hour; gross 0 means the
//     tick is no longer initialized.
//   - TickBase and TickBaseHour: every pool's ticks at the start of
//     TickBaseHour's hour, the changes of all earlier hours folded (no row
//     for a tick not initialized). The job moves it forward to the first
//     hour each run rewrites; the changes from that hour on are the run's.
//
// "At the end of hour h" includes the changes of hour h itself.
const (
	TickChanges  = "osmosis_cl_tick_changes"
	TickBase     = "osmosis_cl_tick_base"
	TickBaseHour = "osmosis_cl_tick_base_hour"
)

// TickBaseStart is the hour the tick base of chainID stands at (the
// changes of the hours before it are folded in); false when there is none.
func TickBaseStart(ctx context.Context, db bun.IDB, chainID string) (time.Time, bool, error) {
	var h time.Time
	err := db.NewRaw("SELECT hour FROM "+TickBaseHour+" WHERE chain_id = ?", chainID).Scan(ctx, &h)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("tick base: %w", err)
	}
	return h.UTC(), true, nil
}

// PoolTick is an initialized tick of a pool.
type PoolTick struct {
	PoolID int64 `bun:"pool_id"`
	clmath.CLTick
}

// TicksAt lists the initialized ticks at the end of hour h of one pool
// (pool > 0) or of every pool (pool 0), ordered by pool and tick. It
// reads the base and the changes since when the base stands at or before
// the hour after h, so the current ticks cost the changes of the last
// hours only; an older h folds every change up to it.
func TicksAt(ctx context.Context, db bun.IDB, chainID string, pool int64, h time.Time) ([]PoolTick, error) {
	base, ok, err := TickBaseStart(ctx, db, chainID)
	if err != nil {
		return nil, err
	}
	useBase := ok && !base.After(h.Add(time.Hour))
	from := "-infinity"
	if useBase {
		from = base.Format(time.RFC3339Nano)
	}
	var out []PoolTick
	if err := db.NewRaw(`SELECT pool_id, tick, net, gross FROM (
			SELECT DISTINCT ON (pool_id, tick) pool_id, tick, liquidity_net::text AS net, liquidity_gross::text AS gross, liquidity_gross > 0 AS initialized
			FROM (SELECT pool_id, tick, liquidity_net, liquidity_gross, '-infinity'::timestamptz AS hour FROM `+TickBase+`
					WHERE chain_id = ?0 AND ?1 AND (?2 = 0 OR pool_id = ?2)
				UNION ALL
				SELECT pool_id, tick, liquidity_net, liquidity_gross, hour FROM `+TickChanges+`
					WHERE chain_id = ?0 AND (?2 = 0 OR pool_id = ?2) AND hour >= ?3::timestamptz AND hour <= ?4) u
			ORDER BY pool_id, tick, hour DESC) t
		WHERE initialized ORDER BY pool_id, tick`, chainID, useBase, pool, from, h).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("ticks at %s: %w", h, err)
	}
	return out, nil
}

// TickChange is a tick's net and gross liquidity at the end of Hour.
type TickChange struct {
	Hour time.Time `bun:"hour"`
	clmath.CLTick
}

// PoolTickChanges lists a pool's tick changes of the hours in (after, to],
// ordered by hour and tick.
func PoolTickChanges(ctx context.Context, db bun.IDB, chainID string, pool int64, after, to time.Time) ([]TickChange, error) {
	var out []TickChange
	if err := db.NewRaw(`SELECT hour, tick, liquidity_net::text AS net, liquidity_gross::text AS gross FROM `+TickChanges+`
		WHERE chain_id = ? AND pool_id = ? AND hour > ? AND hour <= ? ORDER BY hour, tick`, chainID, pool, after, to).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("tick changes of pool %d: %w", pool, err)
	}
	for i := range out {
		out[i].Hour = out[i].Hour.UTC()
	}
	return out, nil
}
