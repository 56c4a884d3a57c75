package dex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains/cosmos"
)

// Portfolio is the dex_portfolio job: what the portfolio endpoints value.
//   - osmosis_balances_hourly: every address's bank balance of every denom
//     (LP shares gamm/pool/N included) at the end of each hour in which it
//     changed, from the genesis rows (balance_changes at height 0, placed at
//     the genesis time) and the indexed balance_changes;
//   - osmosis_pool_shares_hourly: each balancer/stableswap pool's total
//     shares (the sum of every gamm/pool/N balance);
//   - osmosis_locked_hourly: the coins each address has locked in the lockup
//     module (its transfers to the module account minus the module's
//     transfers back; a superfluid or lock slashing, burnt from the module,
//     is not attributed);
//   - osmosis_cl_position_liquidity_hourly: each concentrated-liquidity
//     position's liquidity, owner and range.
//
// Its watermark is the last indexed height it has read; each run recomputes
// whole hours from the first hour with a new change, from the rows before
// it, so reruns give the same rows. Balances are only complete from
// genesis: the endpoints check genesis_imports.
type Portfolio struct{ Market report.Market }

// Name is the job name.
func (Portfolio) Name() string { return report.JobPortfolio }

// RawInputs: concentrated-liquidity position transfers.
func (j Portfolio) RawInputs() aggregator.RawInputs {
	return aggregator.RawInputs{ChainID: j.Market.ChainID, Events: []string{"transfer_positions"}}
}

// Version is the version of the job's rows (see aggregator.Job).
func (Portfolio) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Portfolio) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_balances_hourly", "osmosis_cl_position_liquidity_hourly", "osmosis_locked_hourly", "osmosis_pool_shares_hourly"}, ChainID: j.Market.ChainID}
}

// balanceChanges are the balance changes with their time: a genesis row
// (height 0) at the genesis time.
const balanceChanges = `
	SELECT bc.address, bc.denom, bc.delta, coalesce(b.time, g.genesis_time) AS time, bc.height
	FROM balance_changes bc
	LEFT JOIN blocks b ON b.chain_id = bc.chain_id AND b.height = bc.height
	LEFT JOIN genesis_imports g ON g.chain_id = bc.chain_id AND bc.height = 0
	WHERE bc.chain_id = ?0 AND bc.height >= ?3 AND bc.height <= ?2`

// lockChanges are the coins moved into (+, by the sender) and out of (−, to
// the recipient) the lockup module account ?4.
const lockChanges = `
	SELECT CASE WHEN t.recipient = ?4 THEN t.sender ELSE t.recipient END AS address, t.denom,
		CASE WHEN t.recipient = ?4 THEN t.amount ELSE -t.amount END AS delta, b.time
	FROM transfers t JOIN blocks b ON b.chain_id = t.chain_id AND b.height = t.height
	WHERE t.chain_id = ?0 AND t.kind = 'transfer' AND (t.recipient = ?4 OR t.sender = ?4) AND t.sender <> t.recipient
		AND t.height >= ?3 AND t.height <= ?2`

// Run advances the portfolio tables to the indexed tip.
func (j Portfolio) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	chain := j.Market.ChainID
	tip, err := store.IndexedTip(ctx, tx, chain)
	if err != nil || tip <= wm {
		return wm, 0, err
	}
	// The first new change: the genesis (first run) or the block after wm.
	var first *time.Time
	if wm == 0 {
		err = tx.NewRaw(`SELECT least((SELECT genesis_time FROM genesis_imports WHERE chain_id = ?0),
			(SELECT min(time) FROM blocks WHERE chain_id = ?0 AND height <= ?1))`, chain, tip).Scan(ctx, &first)
	} else {
		err = tx.NewRaw("SELECT min(time) FROM blocks WHERE chain_id = ? AND height > ? AND height <= ?", chain, wm, tip).Scan(ctx, &first)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("first new change: %w", err)
	}
	if first == nil {
		return tip, 0, nil
	}
	h0 := first.UTC().Truncate(time.Hour)
	// The first height whose rows can fall at or after h0.
	var from int64
	var genesis *time.Time
	if err := tx.NewRaw("SELECT genesis_time FROM genesis_imports WHERE chain_id = ?", chain).Scan(ctx, &genesis); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("genesis import: %w", err)
	}
	if genesis == nil || genesis.Before(h0) {
		before, err := store.HeightBefore(ctx, tx, chain, h0)
		if err != nil {
			return 0, 0, err
		}
		from = before + 1
	}
	lockup, err := cosmos.ModuleAddress(j.Market.Prefix, "lockup")
	if err != nil {
		return 0, 0, err
	}
	var total int64
	for _, step := range []struct {
		what, del, ins string
	}{
		{"balances", "DELETE FROM osmosis_balances_hourly WHERE chain_id = ?0 AND hour >= ?1",
			`INSERT INTO osmosis_balances_hourly (chain_id, address, denom, hour, amount)
			SELECT ?0, h.address, h.denom, h.hour, coalesce(b.amount, 0) + sum(h.delta) OVER (PARTITION BY h.address, h.denom ORDER BY h.hour)
			FROM (SELECT address, denom, date_trunc('hour', time) AS hour, sum(delta) AS delta FROM (` + balanceChanges + `) c
				WHERE time >= ?1 GROUP BY address, denom, date_trunc('hour', time)) h
			LEFT JOIN LATERAL (SELECT amount FROM osmosis_balances_hourly p
				WHERE p.chain_id = ?0 AND p.address = h.address AND p.denom = h.denom AND p.hour < ?1 ORDER BY p.hour DESC LIMIT 1) b ON true`},
		{"locked coins", "DELETE FROM osmosis_locked_hourly WHERE chain_id = ?0 AND hour >= ?1",
			`INSERT INTO osmosis_locked_hourly (chain_id, address, denom, hour, amount)
			SELECT ?0, h.address, h.denom, h.hour, coalesce(b.amount, 0) + sum(h.delta) OVER (PARTITION BY h.address, h.denom ORDER BY h.hour)
			FROM (SELECT address, denom, date_trunc('hour', time) AS hour, sum(delta) AS delta FROM (` + lockChanges + `) c
				WHERE time >= ?1 GROUP BY address, denom, date_trunc('hour', time)) h
			LEFT JOIN LATERAL (SELECT amount FROM osmosis_locked_hourly p
				WHERE p.chain_id = ?0 AND p.address = h.address AND p.denom = h.denom AND p.hour < ?1 ORDER BY p.hour DESC LIMIT 1) b ON true`},
		{"pool shares", "DELETE FROM osmosis_pool_shares_hourly WHERE chain_id = ?0 AND hour >= ?1",
			`INSERT INTO osmosis_pool_shares_hourly (chain_id, pool_id, hour, total_shares)
			SELECT ?0, h.pool_id, h.hour, coalesce(b.total_shares, 0) + sum(h.delta) OVER (PARTITION BY h.pool_id ORDER BY h.hour)
			FROM (SELECT substring(denom FROM 11)::bigint AS pool_id, date_trunc('hour', time) AS hour, sum(delta) AS delta FROM (` + balanceChanges + `) c
				WHERE time >= ?1 AND denom ~ '^gamm/pool/[0-9]{1,18}$' GROUP BY 1, 2) h
			LEFT JOIN LATERAL (SELECT total_shares FROM osmosis_pool_shares_hourly p
				WHERE p.chain_id = ?0 AND p.pool_id = h.pool_id AND p.hour < ?1 ORDER BY p.hour DESC LIMIT 1) b ON true`},
	} {
		if _, err := tx.NewRaw(step.del, chain, h0).Exec(ctx); err != nil {
			return 0, 0, fmt.Errorf("delete %s: %w", step.what, err)
		}
		res, err := tx.NewRaw(step.ins, chain, h0, tip, from, lockup).Exec(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("insert %s: %w", step.what, err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	n, err := j.positions(ctx, tx, h0, from, tip)
	if err != nil {
		return 0, 0, err
	}
	return tip, total + n, nil
}

// positionChanges are the concentrated-liquidity position changes in
// execution order: liquidity deltas (create, withdraw; a late start's
// opening positions as creates by their owner at the first indexed
// block's time) and owner changes (transfer_positions of successful txs,
// one row per position id).
const positionChanges = `
	SELECT c.position_id, b.time, c.height, c.tx_index, c.event_index, c.liquidity::text AS delta, c.sender AS owner,
		c.pool_id, c.lower_tick, c.upper_tick, true AS liquidity_row
	FROM osmosis_cl_positions c JOIN blocks b ON b.chain_id = c.chain_id AND b.height = c.height
	WHERE c.chain_id = ?0 AND c.height >= ?2 AND c.height <= ?3 AND b.time >= ?1
	UNION ALL
	SELECT o.position_id, o.time, o.height, -3, 0, o.liquidity::text, o.address, o.pool_id, o.lower_tick, o.upper_tick, true
	FROM (` + openingPositions + `) o WHERE o.time >= ?1 AND o.height <= ?3
	UNION ALL
	SELECT pid::bigint, b.time, e.height, e.tx_index, e.event_index, '0',
		(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'new_owner' LIMIT 1),
		0, 0, 0, false
	FROM events e
	JOIN blocks b ON b.chain_id = e.chain_id AND b.height = e.height
	JOIN txs t ON t.chain_id = e.chain_id AND t.height = e.height AND t.tx_index = e.tx_index AND t.code = 0
	CROSS JOIN LATERAL unnest(string_to_array((SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a
		WHERE a->>'key' = 'input_position_ids' LIMIT 1), ',')) AS pid
	WHERE e.chain_id = ?0 AND e.type = 'transfer_positions' AND e.height >= ?2 AND e.height <= ?3 AND b.time >= ?1
		AND pid ~ '^[0-9]{1,18}$'
	ORDER BY height, tx_index, event_index`

// positionRow is a row of osmosis_cl_position_liquidity_hourly.
type positionRow struct {
	bun.BaseModel `bun:"table:osmosis_cl_position_liquidity_hourly"`
	ChainID       string    `bun:"chain_id"`
	PositionID    int64     `bun:"position_id"`
	Hour          time.Time `bun:"hour"`
	PoolID        int64     `bun:"pool_id"`
	Address       string    `bun:"address"`
	LowerTick     int64     `bun:"lower_tick"`
	UpperTick     int64     `bun:"upper_tick"`
	Liquidity     string    `bun:"liquidity"`
}

// positions recomputes osmosis_cl_position_liquidity_hourly from h0: each
// position's liquidity and owner (its creator, then the new owner of each
// transfer) at the end of every hour in which either changed.
func (j Portfolio) positions(ctx context.Context, tx bun.Tx, h0 time.Time, from, tip int64) (int64, error) {
	chain := j.Market.ChainID
	if _, err := tx.NewRaw("DELETE FROM osmosis_cl_position_liquidity_hourly WHERE chain_id = ? AND hour >= ?", chain, h0).Exec(ctx); err != nil {
		return 0, fmt.Errorf("delete position liquidity: %w", err)
	}
	var changes []struct {
		PositionID   int64     `bun:"position_id"`
		Time         time.Time `bun:"time"`
		Height       int64     `bun:"height"`
		TxIndex      int       `bun:"tx_index"`
		EventIndex   int       `bun:"event_index"`
		Delta        string    `bun:"delta"`
		Owner        string    `bun:"owner"`
		PoolID       int64     `bun:"pool_id"`
		LowerTick    int64     `bun:"lower_tick"`
		UpperTick    int64     `bun:"upper_tick"`
		LiquidityRow bool      `bun:"liquidity_row"`
	}
	if err := tx.NewRaw(positionChanges, chain, h0, from, tip).Scan(ctx, &changes); err != nil {
		return 0, fmt.Errorf("position changes: %w", err)
	}
	// The state before h0 of the positions that change, each its latest
	// row (a probe of the primary key per position, not every position
	// ever opened).
	ids := make([]int64, 0, len(changes))
	for _, c := range changes {
		ids = append(ids, c.PositionID)
	}
	var before []positionRow
	if err := tx.NewRaw(`SELECT p.chain_id, p.position_id, p.hour, p.pool_id, p.address, p.lower_tick, p.upper_tick, p.liquidity::text AS liquidity
		FROM (SELECT DISTINCT id FROM unnest(?::bigint[]) AS id) i
		CROSS JOIN LATERAL (SELECT * FROM osmosis_cl_position_liquidity_hourly p WHERE p.chain_id = ? AND p.position_id = i.id AND p.hour < ?
			ORDER BY p.hour DESC LIMIT 1) p`, pgdialect.Array(ids), chain, h0).Scan(ctx, &before); err != nil {
		return 0, fmt.Errorf("position liquidity before %s: %w", h0, err)
	}
	type state struct {
		row positionRow
		liq math.LegacyDec
	}
	states := map[int64]*state{}
	for _, r := range before {
		l, err := math.LegacyNewDecFromStr(r.Liquidity)
		if err != nil {
			return 0, fmt.Errorf("liquidity of position %d: %w", r.PositionID, err)
		}
		states[r.PositionID] = &state{row: r, liq: l}
	}
	var rows []positionRow
	flush := func(touched map[int64]bool, hour time.Time) {
		for id := range touched {
			st := states[id]
			r := st.row
			r.ChainID, r.Hour, r.Liquidity = chain, hour, st.liq.String()
			rows = append(rows, r)
		}
		clear(touched)
	}
	touched := map[int64]bool{}
	var hour time.Time
	for _, c := range changes {
		h := c.Time.UTC().Truncate(time.Hour)
		if !h.Equal(hour) {
			flush(touched, hour)
			hour = h
		}
		st := states[c.PositionID]
		if st == nil {
			if !c.LiquidityRow {
				continue // a transfer of a position never indexed
			}
			st = &state{row: positionRow{PositionID: c.PositionID, PoolID: c.PoolID, LowerTick: c.LowerTick, UpperTick: c.UpperTick}, liq: math.LegacyZeroDec()}
			states[c.PositionID] = st
		}
		if c.LiquidityRow {
			d, err := math.LegacyNewDecFromStr(c.Delta)
			if err != nil {
				return 0, fmt.Errorf("liquidity of position %d: %w", c.PositionID, err)
			}
			st.liq = st.liq.Add(d)
			if st.row.Address == "" {
				st.row.Address = c.Owner // the creator
			}
		} else if c.Owner != "" {
			st.row.Address = c.Owner
		}
		touched[c.PositionID] = true
	}
	flush(touched, hour)
	if err := insertBatches(ctx, tx, rows); err != nil {
		return 0, fmt.Errorf("insert position liquidity: %w", err)
	}
	return int64(len(rows)), nil
}
