package dex

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Liquidity is the dex_liquidity job: osmosis_pool_reserves_hourly (each
// pool's reserves at the end of every hour in which they changed: creation
// deposits, joins and exits, concentrated-liquidity positions, and every
// swap hop in and out) and osmosis_pool_liquidity_daily (the USD value of
// the reserves at the end of each day, at the day's last hourly prices).
// A chain indexed from a later height starts from the reserves of the pools
// imported at the height before (opening.go), in the hour of its first
// block.
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
// 2: osmosis_pool_liquidity_hourly; 3: osmosis_asset_state_hourly.
func (Liquidity) Version() string { return "3" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Liquidity) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_pool_liquidity_daily", report.PoolLiquidityHourly, report.AssetStateHourly, report.PoolReserves, report.PoolReservesLatest}, ChainID: j.Market.ChainID}
}

// changes are every reserve movement with its block time, and the
// reserves of the pools at a late start's opening as movements at its
// time (?3 pool ids, ?4 denoms, ?5 amounts, ?6 time, ?7 height: empty
// when the hours rewritten do not reach it). The pools in ?8 are left out:
// a late start did not import their reserves.
const changes = `SELECT * FROM (
	SELECT l.pool_id, l.denom, l.delta, b.time, l.height FROM osmosis_pool_liquidity l
		JOIN blocks b ON b.chain_id = l.chain_id AND b.height = l.height WHERE l.chain_id = ?0
	UNION ALL SELECT c.pool_id, p.denoms[1], c.amount0, b.time, c.height FROM osmosis_cl_positions c
		JOIN osmosis_known_pools p ON p.chain_id = c.chain_id AND p.pool_id = c.pool_id
		JOIN blocks b ON b.chain_id = c.chain_id AND b.height = c.height WHERE c.chain_id = ?0
	UNION ALL SELECT c.pool_id, p.denoms[2], c.amount1, b.time, c.height FROM osmosis_cl_positions c
		JOIN osmosis_known_pools p ON p.chain_id = c.chain_id AND p.pool_id = c.pool_id
		JOIN blocks b ON b.chain_id = c.chain_id AND b.height = c.height WHERE c.chain_id = ?0
	UNION ALL SELECT pool_id, denom_in, amount_in, time, height FROM osmosis_swaps WHERE chain_id = ?0
	UNION ALL SELECT pool_id, denom_out, -amount_out, time, height FROM osmosis_swaps WHERE chain_id = ?0
	UNION ALL SELECT o.pool_id, o.denom, o.amount, ?6::timestamptz, ?7::bigint FROM unnest(?3::bigint[], ?4::text[], ?5::numeric[]) AS o(pool_id, denom, amount)
	) c WHERE NOT c.pool_id = ANY(coalesce(?8::bigint[], '{}'))`

// Run advances reserves and daily liquidity to the prices job's watermark.
func (j Liquidity) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip := bound
	if tip <= wm {
		return wm, 0, nil
	}
	chain := j.Market.ChainID
	op, err := loadOpening(ctx, tx, chain)
	if err != nil {
		return 0, 0, err
	}
	unknown, err := unknownOpeningReserves(ctx, tx, chain, op)
	if err != nil {
		return 0, 0, err
	}
	var none openingReserves
	var first *time.Time
	args := append(append([]any{chain, wm, tip}, none.args()...), time.Time{}, 0, pgdialect.Array(unknown))
	if err := tx.NewRaw("SELECT min(time) FROM ("+changes+") c WHERE height > ?1 AND height <= ?2", args...).Scan(ctx, &first); err != nil {
		return 0, 0, fmt.Errorf("first new change: %w", err)
	}
	// The opening is new to a run that has not read past its height.
	if op != nil && wm <= op.Height && (first == nil || op.Time.Before(*first)) {
		first = &op.Time
	}
	// The hourly liquidity is rewritten from the hour of the first new
	// block even without a new change: the prices job may have rewritten
	// that hour's closes, and the table reaches the last block's hour.
	var firstBlock time.Time
	if err := tx.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height > ? ORDER BY height LIMIT 1", chain, wm).Scan(ctx, &firstBlock); err != nil {
		return 0, 0, fmt.Errorf("first new block: %w", err)
	}
	hourFrom := firstBlock.UTC().Truncate(time.Hour)
	if first == nil {
		n, err := j.hourly(ctx, tx, hourFrom, tip)
		return tip, n, err
	}
	h0 := first.UTC().Truncate(time.Hour)
	if h0.Before(hourFrom) {
		hourFrom = h0
	}
	var open openingReserves
	openTime, openHeight := time.Time{}, int64(0)
	if op != nil && !op.Time.Before(h0) {
		if open, err = openingReservesOf(ctx, tx, chain, op); err != nil {
			return 0, 0, err
		}
		openTime, openHeight = op.Time, op.Height
	}
	before, err := store.HeightBefore(ctx, tx, chain, h0)
	if err != nil {
		return 0, 0, err
	}
	if _, err := tx.NewRaw("DELETE FROM osmosis_pool_reserves_hourly WHERE chain_id = ? AND hour >= ?", chain, h0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete reserves: %w", err)
	}
	// ?1 is the first hour here, ?9 the last height before it: the height
	// bound is what reaches the scans (block times are not indexed); the
	// opening's rows (height ?7, at its time) are taken by their time.
	// Each key's reserve before the hour is a probe of the primary key.
	res, err := tx.NewRaw(`INSERT INTO osmosis_pool_reserves_hourly (chain_id, pool_id, denom, hour, amount)
		SELECT ?0, h.pool_id, h.denom, h.hour,
			coalesce(b.amount, 0) + sum(h.delta) OVER (PARTITION BY h.pool_id, h.denom ORDER BY h.hour)
		FROM (SELECT pool_id, denom, date_trunc('hour', time) AS hour, sum(delta) AS delta FROM (`+changes+`) c
			WHERE time >= ?1 AND (height > ?9 OR height = ?7) AND height <= ?2 GROUP BY pool_id, denom, date_trunc('hour', time)) h
		LEFT JOIN LATERAL (SELECT amount FROM osmosis_pool_reserves_hourly p
			WHERE p.chain_id = ?0 AND p.pool_id = h.pool_id AND p.denom = h.denom AND p.hour < ?1 ORDER BY p.hour DESC LIMIT 1) b ON true`,
		append(append([]any{chain, h0, tip}, open.args()...), openTime, openHeight, pgdialect.Array(unknown), before)...).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("insert reserves: %w", err)
	}
	reserveRows, _ := res.RowsAffected()
	if err := report.KeepLatestReserves(ctx, tx, chain, h0); err != nil {
		return 0, 0, err
	}
	days, err := j.daily(ctx, tx, h0.Truncate(24*time.Hour), tip)
	if err != nil {
		return 0, 0, err
	}
	hours, err := j.hourly(ctx, tx, hourFrom, tip)
	if err != nil {
		return 0, 0, err
	}
	return tip, reserveRows + days + hours, nil
}

// hourly rewrites report.PoolLiquidityHourly and report.AssetStateHourly
// from hour h0 through the hour of the block at height tip: for each hour,
// every pool's reserves at its end valued at the latest closes up to it
// (Market.PoolLiquidity), and every denom's close and reserves in the
// catalog's pools (the (pool, denom) keys of osmosis_known_pools), read a
// day of hours at a time.
func (j Liquidity) hourly(ctx context.Context, tx bun.Tx, h0 time.Time, tip int64) (int64, error) {
	chain := j.Market.ChainID
	var last time.Time
	if err := tx.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height = ?", chain, tip).Scan(ctx, &last); err != nil {
		return 0, fmt.Errorf("time of height %d: %w", tip, err)
	}
	last = last.UTC().Truncate(time.Hour)
	for _, table := range []string{report.PoolLiquidityHourly, report.AssetStateHourly} {
		if _, err := tx.NewRaw("DELETE FROM "+table+" WHERE chain_id = ? AND hour >= ?", chain, h0).Exec(ctx); err != nil {
			return 0, fmt.Errorf("delete %s: %w", table, err)
		}
	}
	var catalog []poolDenom
	if err := tx.NewRaw("SELECT DISTINCT pool_id, unnest(denoms) AS denom FROM osmosis_known_pools WHERE chain_id = ?", chain).Scan(ctx, &catalog); err != nil {
		return 0, fmt.Errorf("catalog's pools: %w", err)
	}
	inCatalog := make(map[poolDenom]bool, len(catalog))
	for _, k := range catalog {
		inCatalog[k] = true
	}
	var n int64
	for start := h0; !start.After(last); start = start.Add(24 * time.Hour) {
		var hours []time.Time
		for h := start; !h.After(last) && h.Before(start.Add(24*time.Hour)); h = h.Add(time.Hour) {
			hours = append(hours, h)
		}
		reserves, err := report.ReservesAt(ctx, tx, chain, hours)
		if err != nil {
			return 0, err
		}
		prices, err := report.PricesAt(ctx, tx, chain, hours)
		if err != nil {
			return 0, err
		}
		rows, states, err := j.hourRows(hours, reserves, prices, inCatalog)
		if err != nil {
			return 0, err
		}
		if err := insertBatches(ctx, tx, rows); err != nil {
			return 0, fmt.Errorf("insert hourly liquidity: %w", err)
		}
		if err := insertBatches(ctx, tx, states); err != nil {
			return 0, fmt.Errorf("insert hourly asset states: %w", err)
		}
		n += int64(len(rows) + len(states))
	}
	return n, nil
}

// hourRows are the rows of report.PoolLiquidityHourly and
// report.AssetStateHourly for hours, from the reserves and prices at each
// of them (report.ReservesAt, report.PricesAt) and the catalog's (pool,
// denom) keys.
func (j Liquidity) hourRows(hours []time.Time, reserves []report.Reserve, prices []report.Price, inCatalog map[poolDenom]bool) ([]poolLiquidityRow, []assetStateRow, error) {
	chain := j.Market.ChainID
	priceAt, priceText := make([]map[string]math.LegacyDec, len(hours)), make([]map[string]string, len(hours))
	for i := range priceAt {
		priceAt[i], priceText[i] = map[string]math.LegacyDec{}, map[string]string{}
	}
	for _, p := range prices {
		d, err := math.LegacyNewDecFromStr(p.USD)
		if err != nil {
			return nil, nil, fmt.Errorf("price of %s: %q: %w", p.Denom, p.USD, err)
		}
		priceAt[p.I][p.Denom], priceText[p.I][p.Denom] = d, p.USD
	}
	// Reserves come by pool, denom and time: gathered per hour and pool.
	type key struct {
		i    int
		pool int64
	}
	held := map[key]map[string]math.Int{}
	var keys []key
	pooled := make([]map[string]math.Int, len(hours))
	for i := range pooled {
		pooled[i] = map[string]math.Int{}
	}
	for _, r := range reserves {
		amt, ok := math.NewIntFromString(r.Amount)
		if !ok {
			return nil, nil, fmt.Errorf("reserve %s of pool %d: %q", r.Denom, r.PoolID, r.Amount)
		}
		k := key{r.I, r.PoolID}
		if held[k] == nil {
			held[k] = map[string]math.Int{}
			keys = append(keys, k)
		}
		held[k][r.Denom] = amt
		if inCatalog[poolDenom{r.PoolID, r.Denom}] {
			if sum, ok := pooled[r.I][r.Denom]; ok {
				amt = sum.Add(amt)
			}
			pooled[r.I][r.Denom] = amt
		}
	}
	rows := make([]poolLiquidityRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, poolLiquidityRow{ChainID: chain, Hour: hours[k.i], PoolID: k.pool,
			LiquidityUSD: j.Market.PoolLiquidity(held[k], priceAt[k.i]).String()})
	}
	var states []assetStateRow
	for i, h := range hours {
		denoms := make([]string, 0, len(priceAt[i])+len(pooled[i]))
		for d := range priceAt[i] {
			denoms = append(denoms, d)
		}
		for d := range pooled[i] {
			if _, ok := priceAt[i][d]; !ok {
				denoms = append(denoms, d)
			}
		}
		slices.Sort(denoms)
		for _, d := range denoms {
			row := assetStateRow{ChainID: chain, Hour: h, Denom: d}
			if p, ok := priceText[i][d]; ok {
				row.PriceUSD = &p
			}
			if a, ok := pooled[i][d]; ok {
				v := a.String()
				row.Reserves = &v
			}
			states = append(states, row)
		}
	}
	return rows, states, nil
}

// poolDenom is a (pool, denom) key of the catalog (osmosis_known_pools).
type poolDenom struct {
	Pool  int64  `bun:"pool_id"`
	Denom string `bun:"denom"`
}

// assetStateRow is a row of report.AssetStateHourly.
type assetStateRow struct {
	bun.BaseModel `bun:"table:osmosis_asset_state_hourly"`
	ChainID       string    `bun:"chain_id"`
	Hour          time.Time `bun:"hour"`
	Denom         string    `bun:"denom"`
	PriceUSD      *string   `bun:"price_usd"`
	Reserves      *string   `bun:"reserves"`
}

// poolLiquidityRow is a row of report.PoolLiquidityHourly.
type poolLiquidityRow struct {
	bun.BaseModel `bun:"table:osmosis_pool_liquidity_hourly"`
	ChainID       string    `bun:"chain_id"`
	Hour          time.Time `bun:"hour"`
	PoolID        int64     `bun:"pool_id"`
	LiquidityUSD  string    `bun:"liquidity_usd"`
}

// openingReserves are pool reserves, as arrays of the same length.
type openingReserves struct {
	ids     []int64
	denoms  []string
	amounts []string
}

func (r *openingReserves) add(id int64, denom, amount string) {
	r.ids, r.denoms, r.amounts = append(r.ids, id), append(r.denoms, denom), append(r.amounts, amount)
}

// args are the arrays as query arguments.
func (r openingReserves) args() []any {
	return []any{pgdialect.Array(r.ids), pgdialect.Array(r.denoms), pgdialect.Array(r.amounts)}
}

// openingReservesOf are the reserves of the pools at the opening, as the
// chain holds them: a balancer or stableswap pool's assets from its record;
// a concentrated-liquidity pool's are the balances of its account (what
// the module reports as its liquidity), from the bank state imported with
// it, else what its imported positions hold at its price (rounded up, as
// the module's position queries). A CosmWasm pool's record names no
// reserves.
func openingReservesOf(ctx context.Context, tx bun.Tx, chain string, op *opening) (openingReserves, error) {
	var out openingReserves
	var gamm []struct {
		PoolID int64  `bun:"pool_id"`
		Denom  string `bun:"denom"`
		Amount string `bun:"amount"`
	}
	if err := tx.NewRaw(`SELECT o.pool_id, u.denom, u.amount::text AS amount FROM osmosis_opening_pools o
		CROSS JOIN LATERAL unnest(o.denoms, o.amounts) AS u(denom, amount)
		WHERE o.chain_id = ? AND o.height = ? AND o.amounts IS NOT NULL ORDER BY o.pool_id, u.denom`, chain, op.Height).Scan(ctx, &gamm); err != nil {
		return out, fmt.Errorf("opening reserves: %w", err)
	}
	for _, r := range gamm {
		out.add(r.PoolID, r.Denom, r.Amount)
	}
	switch {
	case op.Bank:
		if err := tx.NewRaw(`SELECT o.pool_id, bc.denom, bc.delta::text AS amount FROM osmosis_opening_pools o
			JOIN balance_changes bc ON bc.address = o.address AND bc.denom = ANY(o.denoms) AND bc.chain_id = o.chain_id AND bc.height = 0
				AND bc.tx_index = ?
			WHERE o.chain_id = ? AND o.height = ? AND o.type = 'concentrated' ORDER BY o.pool_id, bc.denom`,
			cosmos.StateImportTx, chain, op.Height).Scan(ctx, &gamm); err != nil {
			return out, fmt.Errorf("opening reserves of concentrated-liquidity pools: %w", err)
		}
		for _, r := range gamm {
			out.add(r.PoolID, r.Denom, r.Amount)
		}
	case op.Positions:
		held, err := openingPositionAmounts(ctx, tx, chain, op)
		if err != nil {
			return out, err
		}
		for _, r := range held {
			out.add(r.pool, r.denom, r.amount.String())
		}
	}
	return out, nil
}

// heldAmount is what a pool's positions hold of a denom.
type heldAmount struct {
	pool   int64
	denom  string
	amount math.Int
}

// openingPositionAmounts sums what the imported positions of each
// concentrated-liquidity pool hold of its two tokens at the pool's
// imported price (clmath.PositionAmounts).
func openingPositionAmounts(ctx context.Context, tx bun.Tx, chain string, op *opening) ([]heldAmount, error) {
	var pos []struct {
		PoolID    int64    `bun:"pool_id"`
		Denoms    []string `bun:"denoms,array"`
		SqrtPrice string   `bun:"sqrt_price"`
		Tick      int64    `bun:"tick"`
		Lower     int64    `bun:"lower_tick"`
		Upper     int64    `bun:"upper_tick"`
		Liquidity string   `bun:"liquidity"`
	}
	if err := tx.NewRaw(`SELECT p.pool_id, p.denoms, p.sqrt_price::text AS sqrt_price, p.tick, c.lower_tick, c.upper_tick, c.liquidity::text AS liquidity
		FROM osmosis_opening_pools p JOIN osmosis_opening_cl_positions c ON c.chain_id = p.chain_id AND c.height = p.height AND c.pool_id = p.pool_id
		WHERE p.chain_id = ? AND p.height = ? AND p.type = 'concentrated' AND p.sqrt_price IS NOT NULL ORDER BY p.pool_id, c.position_id`,
		chain, op.Height).Scan(ctx, &pos); err != nil {
		return nil, fmt.Errorf("opening positions: %w", err)
	}
	var out []heldAmount
	for _, p := range pos {
		a0, a1, err := clmath.PositionAmounts(p.Liquidity, p.Lower, p.Upper, p.SqrtPrice, p.Tick)
		if err != nil {
			return nil, fmt.Errorf("opening position of pool %d: %w", p.PoolID, err)
		}
		if n := len(out); n < 2 || out[n-1].pool != p.PoolID {
			out = append(out, heldAmount{p.PoolID, p.Denoms[0], math.ZeroInt()}, heldAmount{p.PoolID, p.Denoms[1], math.ZeroInt()})
		}
		n := len(out)
		out[n-2].amount, out[n-1].amount = out[n-2].amount.Add(a0), out[n-1].amount.Add(a1)
	}
	return out, nil
}

// unknownOpeningReserves are the pools of the opening whose reserves it
// does not know, left out of the reserves rather than counted from zero:
// the CosmWasm pools (their record names none), and the
// concentrated-liquidity pools when neither the bank state nor the
// positions were imported.
func unknownOpeningReserves(ctx context.Context, tx bun.Tx, chain string, op *opening) ([]int64, error) {
	ids := []int64{}
	if op == nil {
		return ids, nil
	}
	if err := tx.NewRaw(`SELECT pool_id FROM osmosis_opening_pools WHERE chain_id = ? AND height = ?
		AND (type = 'cosmwasm' OR (type = 'concentrated' AND NOT ?)) ORDER BY pool_id`,
		chain, op.Height, op.Bank || op.Positions).Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("pools of the opening without reserves: %w", err)
	}
	return ids, nil
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
	var n int64
	for day := d0; !day.After(last.UTC()); day = day.Add(24 * time.Hour) {
		// The day's reserves and prices are those of its last hour (rows
		// are hour-aligned: "before the day's end" is "at its last hour or
		// before"), read a day at a time so a rebuild holds one day.
		at := []time.Time{day.Add(23 * time.Hour)}
		reserves, err := report.ReservesAt(ctx, tx, chain, at)
		if err != nil {
			return 0, err
		}
		prices, err := report.PricesAt(ctx, tx, chain, at)
		if err != nil {
			return 0, err
		}
		priceOf := make(map[string]string, len(prices))
		for _, p := range prices {
			priceOf[p.Denom] = p.USD
		}
		slices.SortFunc(reserves, func(a, b report.Reserve) int {
			return cmp.Or(cmp.Compare(a.PoolID, b.PoolID), cmp.Compare(a.Denom, b.Denom))
		})
		byPool := map[int64]math.LegacyDec{}
		var order []int64
		for _, r := range reserves {
			if _, ok := byPool[r.PoolID]; !ok {
				byPool[r.PoolID] = math.LegacyZeroDec()
				order = append(order, r.PoolID)
			}
			price, ok := priceOf[r.Denom]
			if !ok {
				continue // no price yet: the denom adds nothing
			}
			amt, ok := math.NewIntFromString(r.Amount)
			p, err := math.LegacyNewDecFromStr(price)
			if !ok || err != nil {
				return 0, fmt.Errorf("reserve %s of pool %d: %q at %q", r.Denom, r.PoolID, r.Amount, price)
			}
			byPool[r.PoolID] = byPool[r.PoolID].Add(j.Market.USDValue(r.Denom, amt, p))
		}
		rows := make([]liquidityRow, 0, len(order))
		for _, id := range order {
			rows = append(rows, liquidityRow{ChainID: chain, PoolID: id, Day: day, LiquidityUSD: byPool[id].String()})
		}
		if err := insertBatches(ctx, tx, rows); err != nil {
			return 0, fmt.Errorf("insert liquidity: %w", err)
		}
		n += int64(len(rows))
	}
	return n, nil
}

// liquidityRow is a row of osmosis_pool_liquidity_daily.
type liquidityRow struct {
	bun.BaseModel `bun:"table:osmosis_pool_liquidity_daily"`
	ChainID       string    `bun:"chain_id"`
	PoolID        int64     `bun:"pool_id"`
	Day           time.Time `bun:"day"`
	LiquidityUSD  string    `bun:"liquidity_usd"`
}
