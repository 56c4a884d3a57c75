package dex

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"
)

// CLState is the dex_cl_state job: osmosis_cl_state_hourly, the state of
// every concentrated-liquidity pool (sqrt price, current tick, liquidity in
// range) at the end of every hour in which it changed, and its initialized
// ticks as changes (report.TickChanges, with the base each run starts
// from: report.TickBase). The state is not in the events:
// the job replays each pool from its first position (whose provided tokens
// set the initial price) through every position change and swap hop with
// the module's own arithmetic (clmath.go); a pool a late start imported,
// from its imported price, liquidity and positions (opening.go).
//
// Its watermark is the last indexed height it has read; each run restarts
// from the state at the end of the hour before the first new change and
// rewrites the hours from there, so reruns give the same rows. A run reads
// and writes what changed since: the latest state row of each pool, the
// tick base moved to that hour, and the ticks the hours' positions moved
// (version 1 wrote every initialized tick of each touched pool every hour,
// which grew with the open positions).
type CLState struct {
	Market report.Market
	Log    *slog.Logger
}

// Name is the job name.
func (CLState) Name() string { return report.JobCLState }

// Version is the version of the job's rows (see aggregator.Job).
func (CLState) Version() string { return "2" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j CLState) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_cl_state_hourly", report.TickChanges, report.TickBase, report.TickBaseHour}, ChainID: j.Market.ChainID}
}

// clEvents are the position changes and swap hops of concentrated-liquidity
// pools, in execution order.
const clEvents = `
	SELECT c.height, c.tx_index, c.event_index, b.time, c.pool_id, 'position' AS kind, c.lower_tick, c.upper_tick,
		c.liquidity::text AS liquidity, c.provided, '' AS denom_in, '0' AS amount_in, '0' AS amount_out, false AS exact_out
		FROM osmosis_cl_positions c JOIN blocks b ON b.chain_id = c.chain_id AND b.height = c.height
		WHERE c.chain_id = ?0 AND c.height > ?1 AND c.height <= ?2
	UNION ALL SELECT s.height, s.tx_index, s.event_index, s.time, s.pool_id, 'swap', 0, 0, '0', '', s.denom_in,
		s.amount_in::text, s.amount_out::text, s.exact_out
		FROM osmosis_swaps s JOIN osmosis_known_pools p ON p.chain_id = s.chain_id AND p.pool_id = s.pool_id AND p.type = 'concentrated'
		WHERE s.chain_id = ?0 AND s.height > ?1 AND s.height <= ?2`

type clEvent struct {
	Height     int64     `bun:"height"`
	TxIndex    int       `bun:"tx_index"`
	EventIndex int       `bun:"event_index"`
	Time       time.Time `bun:"time"`
	PoolID     int64     `bun:"pool_id"`
	Kind       string    `bun:"kind"`
	Lower      int64     `bun:"lower_tick"`
	Upper      int64     `bun:"upper_tick"`
	Liquidity  string    `bun:"liquidity"`
	Provided   string    `bun:"provided"`
	DenomIn    string    `bun:"denom_in"`
	AmountIn   string    `bun:"amount_in"`
	AmountOut  string    `bun:"amount_out"`
	ExactOut   bool      `bun:"exact_out"`
}

type clPoolInfo struct {
	PoolID int64    `bun:"pool_id"`
	Denoms []string `bun:"denoms,array"`
	Fee    *string  `bun:"fee"`
}

// Run advances the pools' state to the indexed tip.
func (j CLState) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	chain := j.Market.ChainID
	tip, err := store.IndexedTip(ctx, tx, chain)
	if err != nil || tip <= wm {
		return wm, 0, err
	}
	op, err := loadOpening(ctx, tx, chain)
	if err != nil {
		return 0, 0, err
	}
	var first *time.Time
	if err := tx.NewRaw("SELECT min(time) FROM ("+clEvents+") e", chain, wm, tip).Scan(ctx, &first); err != nil {
		return 0, 0, fmt.Errorf("first new change: %w", err)
	}
	// The opening is new to a run that has not read past its height.
	if op != nil && wm <= op.Height && (first == nil || op.Time.Before(*first)) {
		first = &op.Time
	}
	if first == nil {
		return tip, 0, nil
	}
	h0 := first.UTC().Truncate(time.Hour)
	var infos []clPoolInfo
	if err := tx.NewRaw("SELECT pool_id, denoms, swap_fee::text AS fee FROM osmosis_known_pools WHERE chain_id = ? AND type = 'concentrated'",
		chain).Scan(ctx, &infos); err != nil {
		return 0, 0, fmt.Errorf("pools: %w", err)
	}
	pools, byID, err := j.stateBefore(ctx, tx, h0, infos)
	if err != nil {
		return 0, 0, err
	}
	touched := map[int64]bool{}
	moved := map[poolTick]bool{} // the ticks the hour's positions changed
	var hour time.Time           // of the touched pools
	if op != nil {
		if err := j.opening(ctx, tx, op, h0, pools, touched); err != nil {
			return 0, 0, err
		}
		for id := range touched { // the opening sets every tick of its pools
			for _, t := range pools[id].Ticks() {
				moved[poolTick{id, t}] = true
			}
		}
		hour = op.Time.UTC().Truncate(time.Hour)
	}
	for _, t := range []string{"osmosis_cl_state_hourly", report.TickChanges} {
		if _, err := tx.NewRaw("DELETE FROM "+t+" WHERE chain_id = ? AND hour >= ?", chain, h0).Exec(ctx); err != nil {
			return 0, 0, fmt.Errorf("delete %s: %w", t, err)
		}
	}
	// Every event from the start of h0: the state before h0 is the base.
	from, err := store.HeightBefore(ctx, tx, chain, h0)
	if err != nil {
		return 0, 0, err
	}
	var events []clEvent
	if err := tx.NewRaw("SELECT * FROM ("+clEvents+") e ORDER BY height, tx_index, event_index", chain, from, tip).Scan(ctx, &events); err != nil {
		return 0, 0, fmt.Errorf("changes: %w", err)
	}
	var rows int64
	inexact := 0
	// The pools touched in an hour are written once its last event is
	// replayed (the opening's pools at the opening's hour).
	for _, ev := range events {
		if h := ev.Time.UTC().Truncate(time.Hour); !h.Equal(hour) {
			n, err := j.write(ctx, tx, hour, pools, touched, moved)
			if err != nil {
				return 0, 0, err
			}
			rows += n
			clear(touched)
			clear(moved)
			hour = h
		}
		p, ok := pools[ev.PoolID]
		if !ok {
			continue // not a concentrated-liquidity pool
		}
		if err := apply(p, byID[ev.PoolID], ev, &inexact); errors.Is(err, errNoInitialPrice) {
			// Indexed before positions recorded their provided tokens: the
			// pool cannot be replayed until the chain is reindexed.
			delete(pools, ev.PoolID)
			delete(touched, ev.PoolID)
			for k := range moved {
				if k.pool == ev.PoolID {
					delete(moved, k)
				}
			}
			if j.Log != nil {
				j.Log.Warn("concentrated-liquidity pool not replayed", "pool", ev.PoolID, "err", err)
			}
			continue
		} else if err != nil {
			return 0, 0, fmt.Errorf("pool %d at height %d: %w", ev.PoolID, ev.Height, err)
		}
		touched[ev.PoolID] = true
		if ev.Kind == "position" {
			moved[poolTick{ev.PoolID, ev.Lower}], moved[poolTick{ev.PoolID, ev.Upper}] = true, true
		}
	}
	n, err := j.write(ctx, tx, hour, pools, touched, moved)
	if err != nil {
		return 0, 0, err
	}
	rows += n
	if inexact > 0 && j.Log != nil {
		j.Log.Warn("concentrated-liquidity swaps replayed within one base unit", "swaps", inexact)
	}
	return tip, rows, nil
}

// opening starts the concentrated-liquidity pools of a late start's
// opening from their imported state when the hours rewritten reach it
// (the opening is at or after h0): the pool's sqrt price, tick and
// liquidity in range, and its ticks: those of its imported positions or,
// when the node did not serve the positions, its imported ticks (their
// gross and net liquidity); they are then touched. A pool without a price
// yet is set by its first position, as from genesis. The opening's pools
// are never replayed (on any run) without either import, nor a pool whose
// imported positions or ticks do not hold its liquidity in range (read at
// another height): their ticks are unknown.
func (j CLState) opening(ctx context.Context, tx bun.Tx, op *opening, h0 time.Time, pools map[int64]*clmath.CLPool, touched map[int64]bool) error {
	chain := j.Market.ChainID
	var opened []struct {
		PoolID    int64   `bun:"pool_id"`
		Fee       *string `bun:"fee"`
		SqrtPrice *string `bun:"sqrt_price"`
		Tick      *int64  `bun:"tick"`
		Liquidity *string `bun:"liquidity"`
		// Held is the liquidity in range of the imported positions, or of
		// the imported ticks at or below the current one; Listed the
		// ticks listed without a record of the same net liquidity.
		Held   string `bun:"held"`
		Listed int    `bun:"listed"`
	}
	held := `coalesce((SELECT sum(c.liquidity) FROM osmosis_opening_cl_positions c WHERE c.chain_id = p.chain_id AND c.height = p.height
				AND c.pool_id = p.pool_id AND c.lower_tick <= p.tick AND p.tick < c.upper_tick), 0)::text AS held, 0 AS listed`
	if !op.Positions {
		held = `coalesce((SELECT sum(t.liquidity_net) FROM osmosis_opening_cl_tick_info t WHERE t.chain_id = p.chain_id AND t.height = p.height
				AND t.pool_id = p.pool_id AND t.tick <= p.tick), 0)::text AS held,
			(SELECT count(*) FROM osmosis_opening_cl_ticks l WHERE l.chain_id = p.chain_id AND l.height = p.height AND l.pool_id = p.pool_id
				AND NOT EXISTS (SELECT 1 FROM osmosis_opening_cl_tick_info t WHERE t.chain_id = l.chain_id AND t.height = l.height
					AND t.pool_id = l.pool_id AND t.tick = l.tick AND t.liquidity_net = l.liquidity_net)) AS listed`
	}
	if err := tx.NewRaw(`SELECT p.pool_id, p.swap_fee::text AS fee, p.sqrt_price::text AS sqrt_price, p.tick, p.liquidity::text AS liquidity, `+held+`
		FROM osmosis_opening_pools p WHERE p.chain_id = ? AND p.height = ? AND p.type = 'concentrated' ORDER BY p.pool_id`,
		chain, op.Height).Scan(ctx, &opened); err != nil {
		return fmt.Errorf("opening pools: %w", err)
	}
	now := !op.Time.Before(h0) // the opening's hour is rewritten
	known := op.Positions || op.Ticks
	var replayed []int
	for i, o := range opened {
		switch {
		case !known:
			delete(pools, o.PoolID)
		case o.SqrtPrice != nil && o.Liquidity != nil && (!sameDec(*o.Liquidity, o.Held) || o.Listed > 0):
			delete(pools, o.PoolID)
			if now && j.Log != nil {
				j.Log.Warn("concentrated-liquidity pool of the opening not replayed: its imported positions or ticks do not hold its liquidity in range",
					"pool", o.PoolID, "height", op.Height, "liquidity", *o.Liquidity, "imported", o.Held, "ticks_without_record", o.Listed)
			}
		default:
			replayed = append(replayed, i)
		}
	}
	if !known && len(opened) > 0 && now && j.Log != nil {
		j.Log.Warn("concentrated-liquidity pools of the opening not replayed: neither their positions nor their ticks were imported", "pools", len(opened), "height", op.Height)
	}
	if !now || len(replayed) == 0 {
		return nil // the state before h0 holds them
	}
	start, err := openingTicks(ctx, tx, chain, op)
	if err != nil {
		return err
	}
	for _, i := range replayed {
		o := opened[i]
		if _, ok := pools[o.PoolID]; !ok {
			continue
		}
		sf := new(big.Int)
		if o.Fee != nil {
			d, err := clmath.DecInt(*o.Fee)
			if err != nil {
				return fmt.Errorf("opening pool %d: %w", o.PoolID, err)
			}
			sf = d
		}
		p := clmath.NewCLPool(sf)
		if err := start(o.PoolID, p); err != nil {
			return err
		}
		pools[o.PoolID] = p
		if o.SqrtPrice == nil || o.Tick == nil || o.Liquidity == nil {
			continue // no position yet: the first sets the price
		}
		sp, ok := new(big.Int).SetString(clmath.StripPoint(*o.SqrtPrice, 36), 10)
		liq, err := clmath.DecInt(*o.Liquidity)
		if !ok || err != nil {
			return fmt.Errorf("opening pool %d: sqrt price %q, liquidity %q", o.PoolID, *o.SqrtPrice, *o.Liquidity)
		}
		p.SqrtPrice, p.Tick, p.Liquidity = sp, *o.Tick, liq
		touched[o.PoolID] = true
	}
	return nil
}

// openingTicks returns what sets an opening pool's ticks (before its
// price): its imported positions' when they were imported, else its
// imported ticks' gross and net liquidity.
func openingTicks(ctx context.Context, tx bun.Tx, chain string, op *opening) (func(pool int64, p *clmath.CLPool) error, error) {
	if op.Positions {
		var positions []struct {
			PoolID    int64  `bun:"pool_id"`
			Lower     int64  `bun:"lower_tick"`
			Upper     int64  `bun:"upper_tick"`
			Liquidity string `bun:"liquidity"`
		}
		if err := tx.NewRaw(`SELECT pool_id, lower_tick, upper_tick, liquidity::text AS liquidity FROM osmosis_opening_cl_positions
			WHERE chain_id = ? AND height = ? ORDER BY pool_id, position_id`, chain, op.Height).Scan(ctx, &positions); err != nil {
			return nil, fmt.Errorf("opening positions: %w", err)
		}
		byPool := map[int64][]int{}
		for i, p := range positions {
			byPool[p.PoolID] = append(byPool[p.PoolID], i)
		}
		return func(pool int64, p *clmath.CLPool) error {
			for _, k := range byPool[pool] {
				c := positions[k]
				liq, err := clmath.DecInt(c.Liquidity)
				if err != nil {
					return fmt.Errorf("opening position of pool %d: %w", pool, err)
				}
				p.Position(c.Lower, c.Upper, liq) // no price yet: the ticks only
			}
			return nil
		}, nil
	}
	var ticks []struct {
		PoolID int64  `bun:"pool_id"`
		Tick   int64  `bun:"tick"`
		Gross  string `bun:"gross"`
		Net    string `bun:"net"`
	}
	if err := tx.NewRaw(`SELECT pool_id, tick, liquidity_gross::text AS gross, liquidity_net::text AS net FROM osmosis_opening_cl_tick_info
		WHERE chain_id = ? AND height = ? ORDER BY pool_id, tick`, chain, op.Height).Scan(ctx, &ticks); err != nil {
		return nil, fmt.Errorf("opening ticks: %w", err)
	}
	byPool := map[int64][]int{}
	for i, t := range ticks {
		byPool[t.PoolID] = append(byPool[t.PoolID], i)
	}
	return func(pool int64, p *clmath.CLPool) error {
		for _, k := range byPool[pool] {
			t := ticks[k]
			gross, err1 := clmath.DecInt(t.Gross)
			net, err2 := clmath.DecInt(t.Net)
			if err1 != nil || err2 != nil {
				return fmt.Errorf("opening tick %d of pool %d: gross %q, net %q", t.Tick, pool, t.Gross, t.Net)
			}
			p.Net[t.Tick], p.Gross[t.Tick] = net, gross
		}
		return nil
	}, nil
}

// sameDec reports whether two decimal strings are the same number.
func sameDec(a, b string) bool {
	x, err1 := math.LegacyNewDecFromStr(a)
	y, err2 := math.LegacyNewDecFromStr(b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

// errNoInitialPrice: the pool's initial price is unknown.
var errNoInitialPrice = errors.New("the pool's initial price is unknown")

// apply replays one position change or swap hop.
func apply(p *clmath.CLPool, info clPoolInfo, ev clEvent, inexact *int) error {
	if ev.Kind == "position" {
		liq, err := clmath.DecInt(ev.Liquidity)
		if err != nil {
			return err
		}
		if p.SqrtPrice == nil {
			coins, err := chains.ParseCoins(ev.Provided)
			if err != nil || len(info.Denoms) != 2 || len(coins) == 0 {
				return fmt.Errorf("first position: provided %q (%v): %w", ev.Provided, err, errNoInitialPrice)
			}
			amounts := map[string]*big.Int{}
			for _, c := range coins {
				a, ok := new(big.Int).SetString(c.Amount, 10)
				if ok {
					amounts[c.Denom] = a
				}
			}
			a0, a1 := amounts[info.Denoms[0]], amounts[info.Denoms[1]]
			if a0 == nil || a1 == nil {
				return fmt.Errorf("first position provided %q, not both pool tokens: %w", ev.Provided, errNoInitialPrice)
			}
			if err := p.Initialize(a0, a1); err != nil {
				return err
			}
		}
		p.Position(ev.Lower, ev.Upper, liq)
		return nil
	}
	if p.SqrtPrice == nil {
		return fmt.Errorf("swap before the first position: %w", errNoInitialPrice)
	}
	in, ok1 := new(big.Int).SetString(ev.AmountIn, 10)
	out, ok2 := new(big.Int).SetString(ev.AmountOut, 10)
	if !ok1 || !ok2 {
		return fmt.Errorf("swap amounts %q, %q", ev.AmountIn, ev.AmountOut)
	}
	zeroForOne := ev.DenomIn == info.Denoms[0]
	if ev.ExactOut {
		_, err := p.SwapOut(zeroForOne, out)
		return err
	}
	exact, err := p.SwapInNet(zeroForOne, in, out)
	if !exact {
		*inexact++
	}
	return err
}

// stateBefore loads every concentrated-liquidity pool's state at the end
// of the last hour before h0 (empty pools when there is none): its latest
// state row, and its ticks from the tick base, moved to h0 first.
func (j CLState) stateBefore(ctx context.Context, tx bun.Tx, h0 time.Time, infos []clPoolInfo) (map[int64]*clmath.CLPool, map[int64]clPoolInfo, error) {
	chain := j.Market.ChainID
	pools, byID := map[int64]*clmath.CLPool{}, map[int64]clPoolInfo{}
	ids := make([]int64, 0, len(infos))
	for _, in := range infos {
		sf := new(big.Int)
		if in.Fee != nil {
			d, err := clmath.DecInt(*in.Fee)
			if err != nil {
				return nil, nil, err
			}
			sf = d
		}
		pools[in.PoolID], byID[in.PoolID] = clmath.NewCLPool(sf), in
		ids = append(ids, in.PoolID)
	}
	var states []struct {
		PoolID    int64  `bun:"pool_id"`
		SqrtPrice string `bun:"sqrt_price"`
		Tick      int64  `bun:"tick"`
		Liquidity string `bun:"liquidity"`
	}
	// One index probe a pool, whatever the length of the history.
	if err := tx.NewRaw(`SELECT s.pool_id, s.sqrt_price::text AS sqrt_price, s.tick, s.liquidity::text AS liquidity
		FROM unnest(?::bigint[]) p(id) CROSS JOIN LATERAL (SELECT pool_id, sqrt_price, tick, liquidity FROM osmosis_cl_state_hourly
			WHERE chain_id = ? AND pool_id = p.id AND hour < ? ORDER BY hour DESC LIMIT 1) s`, pgdialect.Array(ids), chain, h0).Scan(ctx, &states); err != nil {
		return nil, nil, fmt.Errorf("state before %s: %w", h0, err)
	}
	stated := map[int64]bool{}
	for _, s := range states {
		p := pools[s.PoolID]
		sp, ok1 := new(big.Int).SetString(clmath.StripPoint(s.SqrtPrice, 36), 10)
		liq, err := clmath.DecInt(s.Liquidity)
		if !ok1 || err != nil {
			return nil, nil, fmt.Errorf("state of pool %d: %q %q", s.PoolID, s.SqrtPrice, s.Liquidity)
		}
		p.SqrtPrice, p.Tick, p.Liquidity = sp, s.Tick, liq
		stated[s.PoolID] = true
	}
	if err := j.moveTickBase(ctx, tx, h0); err != nil {
		return nil, nil, err
	}
	var ticks []report.PoolTick
	if err := tx.NewRaw("SELECT pool_id, tick, liquidity_net::text AS net, liquidity_gross::text AS gross FROM "+report.TickBase+" WHERE chain_id = ?",
		chain).Scan(ctx, &ticks); err != nil {
		return nil, nil, fmt.Errorf("ticks before %s: %w", h0, err)
	}
	for _, t := range ticks {
		if !stated[t.PoolID] {
			continue // written only with a state: none before h0
		}
		net, err1 := clmath.DecInt(t.Net)
		gross, err2 := clmath.DecInt(t.Gross)
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("tick %d of pool %d: %q %q", t.Tick, t.PoolID, t.Net, t.Gross)
		}
		pools[t.PoolID].Net[t.Tick], pools[t.PoolID].Gross[t.Tick] = net, gross
	}
	return pools, byID, nil
}

// moveTickBase moves the tick base to h0: the changes of the hours since
// the base's hour are folded in (a run a few hours on reads those hours'
// changes only); a base past h0 (a run rewinding before it) is rebuilt
// from all changes before h0.
func (j CLState) moveTickBase(ctx context.Context, tx bun.Tx, h0 time.Time) error {
	chain := j.Market.ChainID
	base, ok, err := report.TickBaseStart(ctx, tx, chain)
	if err != nil {
		return err
	}
	from := "-infinity"
	switch {
	case ok && base.Equal(h0):
		return nil
	case ok && base.Before(h0):
		from = base.Format(time.RFC3339Nano)
	default:
		if _, err := tx.NewRaw("DELETE FROM "+report.TickBase+" WHERE chain_id = ?", chain).Exec(ctx); err != nil {
			return fmt.Errorf("reset tick base: %w", err)
		}
	}
	if _, err := tx.NewRaw(`INSERT INTO `+report.TickBase+` (chain_id, pool_id, tick, liquidity_net, liquidity_gross)
		SELECT DISTINCT ON (pool_id, tick) chain_id, pool_id, tick, liquidity_net, liquidity_gross FROM `+report.TickChanges+`
		WHERE chain_id = ? AND hour >= ?::timestamptz AND hour < ? ORDER BY pool_id, tick, hour DESC
		ON CONFLICT (chain_id, pool_id, tick) DO UPDATE SET liquidity_net = EXCLUDED.liquidity_net, liquidity_gross = EXCLUDED.liquidity_gross`,
		chain, from, h0).Exec(ctx); err != nil {
		return fmt.Errorf("fold tick changes before %s: %w", h0, err)
	}
	if _, err := tx.NewRaw("DELETE FROM "+report.TickBase+" WHERE chain_id = ? AND liquidity_gross = 0", chain).Exec(ctx); err != nil {
		return fmt.Errorf("tick base: %w", err)
	}
	if _, err := tx.NewRaw(`INSERT INTO `+report.TickBaseHour+` (chain_id, hour) VALUES (?, ?)
		ON CONFLICT (chain_id) DO UPDATE SET hour = EXCLUDED.hour`, chain, h0).Exec(ctx); err != nil {
		return fmt.Errorf("tick base hour: %w", err)
	}
	return nil
}

// poolTick is a tick of a pool.
type poolTick struct{ pool, tick int64 }

// clStateRow is a row of osmosis_cl_state_hourly.
type clStateRow struct {
	bun.BaseModel `bun:"table:osmosis_cl_state_hourly"`
	ChainID       string    `bun:"chain_id"`
	PoolID        int64     `bun:"pool_id"`
	Hour          time.Time `bun:"hour"`
	SqrtPrice     string    `bun:"sqrt_price"`
	Tick          int64     `bun:"tick"`
	Liquidity     string    `bun:"liquidity"`
}

// tickChangeRow is a row of osmosis_cl_tick_changes.
type tickChangeRow struct {
	bun.BaseModel `bun:"table:osmosis_cl_tick_changes"`
	ChainID       string    `bun:"chain_id"`
	PoolID        int64     `bun:"pool_id"`
	Hour          time.Time `bun:"hour"`
	Tick          int64     `bun:"tick"`
	Net           string    `bun:"liquidity_net"`
	Gross         string    `bun:"liquidity_gross"`
}

// write stores the state of the touched pools at the end of hour, and the
// ticks moved in it (gross 0: no longer initialized).
func (j CLState) write(ctx context.Context, tx bun.Tx, hour time.Time, pools map[int64]*clmath.CLPool, touched map[int64]bool, moved map[poolTick]bool) (int64, error) {
	chain := j.Market.ChainID
	var states []clStateRow
	for id := range touched {
		if p := pools[id]; p.SqrtPrice != nil {
			states = append(states, clStateRow{ChainID: chain, PoolID: id, Hour: hour, SqrtPrice: clmath.Fixed(p.SqrtPrice, 36), Tick: p.Tick,
				Liquidity: clmath.Fixed(p.Liquidity, 18)})
		}
	}
	var ticks []tickChangeRow
	for k := range moved {
		p := pools[k.pool]
		if p == nil || p.SqrtPrice == nil || !touched[k.pool] {
			continue
		}
		net, gross := "0", "0"
		if g, ok := p.Gross[k.tick]; ok {
			net, gross = clmath.Fixed(p.Net[k.tick], 18), clmath.Fixed(g, 18)
		}
		ticks = append(ticks, tickChangeRow{ChainID: chain, PoolID: k.pool, Hour: hour, Tick: k.tick, Net: net, Gross: gross})
	}
	// In key order: the same rows in the same order on every rerun.
	slices.SortFunc(states, func(a, b clStateRow) int { return cmp.Compare(a.PoolID, b.PoolID) })
	slices.SortFunc(ticks, func(a, b tickChangeRow) int {
		return cmp.Or(cmp.Compare(a.PoolID, b.PoolID), cmp.Compare(a.Tick, b.Tick))
	})
	written := int64(len(states) + len(ticks))
	if err := upsertBatches(ctx, tx, states, `CONFLICT (chain_id, pool_id, hour) DO UPDATE SET sqrt_price = EXCLUDED.sqrt_price,
		tick = EXCLUDED.tick, liquidity = EXCLUDED.liquidity`); err != nil {
		return 0, fmt.Errorf("state of the pools at %s: %w", hour, err)
	}
	if err := upsertBatches(ctx, tx, ticks, `CONFLICT (chain_id, pool_id, hour, tick) DO UPDATE SET liquidity_net = EXCLUDED.liquidity_net,
		liquidity_gross = EXCLUDED.liquidity_gross`); err != nil {
		return 0, fmt.Errorf("ticks of the pools at %s: %w", hour, err)
	}
	return written, nil
}
