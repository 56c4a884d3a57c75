package dex

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"
)

// CLState is the dex_cl_state job: osmosis_cl_state_hourly and
// osmosis_cl_ticks_hourly, the state of every concentrated-liquidity pool
// (sqrt price, current tick, liquidity in range, initialized ticks) at the
// end of every hour in which it changed. The state is not in the events:
// the job replays each pool from its first position (whose provided tokens
// set the initial price) through every position change and swap hop with
// the module's own arithmetic (clmath.go).
//
// Its watermark is the last indexed height it has read; each run restarts
// from the state at the end of the hour before the first new change and
// rewrites the hours from there, so reruns give the same rows.
type CLState struct {
	Market report.Market
	Log    *slog.Logger
}

// Name is the job name.
func (CLState) Name() string { return report.JobCLState }

// Version is the version of the job's rows (see aggregator.Job).
func (CLState) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j CLState) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_cl_state_hourly", "osmosis_cl_ticks_hourly"}, ChainID: j.Market.ChainID}
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
		FROM osmosis_swaps s JOIN osmosis_pools p ON p.chain_id = s.chain_id AND p.pool_id = s.pool_id AND p.type = 'concentrated'
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
	var first *time.Time
	if err := tx.NewRaw("SELECT min(time) FROM ("+clEvents+") e", chain, wm, tip).Scan(ctx, &first); err != nil {
		return 0, 0, fmt.Errorf("first new change: %w", err)
	}
	if first == nil {
		return tip, 0, nil
	}
	h0 := first.UTC().Truncate(time.Hour)
	var infos []clPoolInfo
	if err := tx.NewRaw("SELECT pool_id, denoms, swap_fee::text AS fee FROM osmosis_pools WHERE chain_id = ? AND type = 'concentrated'",
		chain).Scan(ctx, &infos); err != nil {
		return 0, 0, fmt.Errorf("pools: %w", err)
	}
	pools, byID, err := j.stateBefore(ctx, tx, h0, infos)
	if err != nil {
		return 0, 0, err
	}
	for _, t := range []string{"osmosis_cl_state_hourly", "osmosis_cl_ticks_hourly"} {
		if _, err := tx.NewRaw("DELETE FROM "+t+" WHERE chain_id = ? AND hour >= ?", chain, h0).Exec(ctx); err != nil {
			return 0, 0, fmt.Errorf("delete %s: %w", t, err)
		}
	}
	// Every event from the start of h0: the state before h0 is the base.
	var from int64
	if err := tx.NewRaw("SELECT coalesce(min(height), 0) - 1 FROM blocks WHERE chain_id = ? AND time >= ?", chain, h0).Scan(ctx, &from); err != nil {
		return 0, 0, fmt.Errorf("first height of %s: %w", h0, err)
	}
	var events []clEvent
	if err := tx.NewRaw("SELECT * FROM ("+clEvents+") e ORDER BY height, tx_index, event_index", chain, from, tip).Scan(ctx, &events); err != nil {
		return 0, 0, fmt.Errorf("changes: %w", err)
	}
	var rows int64
	touched := map[int64]bool{}
	inexact := 0
	for i, ev := range events {
		p, ok := pools[ev.PoolID]
		if !ok {
			continue // not a concentrated-liquidity pool
		}
		if err := apply(p, byID[ev.PoolID], ev, &inexact); errors.Is(err, errNoInitialPrice) {
			// Indexed before positions recorded their provided tokens: the
			// pool cannot be replayed until the chain is reindexed.
			delete(pools, ev.PoolID)
			if j.Log != nil {
				j.Log.Warn("concentrated-liquidity pool not replayed", "pool", ev.PoolID, "err", err)
			}
			continue
		} else if err != nil {
			return 0, 0, fmt.Errorf("pool %d at height %d: %w", ev.PoolID, ev.Height, err)
		}
		touched[ev.PoolID] = true
		hour := ev.Time.UTC().Truncate(time.Hour)
		if i < len(events)-1 && events[i+1].Time.UTC().Truncate(time.Hour).Equal(hour) {
			continue
		}
		n, err := j.write(ctx, tx, hour, pools, touched)
		if err != nil {
			return 0, 0, err
		}
		rows += n
		touched = map[int64]bool{}
	}
	if inexact > 0 && j.Log != nil {
		j.Log.Warn("concentrated-liquidity swaps replayed within one base unit", "swaps", inexact)
	}
	return tip, rows, nil
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
// of the last hour before h0 (empty pools when there is none).
func (j CLState) stateBefore(ctx context.Context, tx bun.Tx, h0 time.Time, infos []clPoolInfo) (map[int64]*clmath.CLPool, map[int64]clPoolInfo, error) {
	chain := j.Market.ChainID
	pools, byID := map[int64]*clmath.CLPool{}, map[int64]clPoolInfo{}
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
	}
	var states []struct {
		PoolID    int64     `bun:"pool_id"`
		Hour      time.Time `bun:"hour"`
		SqrtPrice string    `bun:"sqrt_price"`
		Tick      int64     `bun:"tick"`
		Liquidity string    `bun:"liquidity"`
	}
	if err := tx.NewRaw(`SELECT DISTINCT ON (pool_id) pool_id, hour, sqrt_price::text AS sqrt_price, tick, liquidity::text AS liquidity
		FROM osmosis_cl_state_hourly WHERE chain_id = ? AND hour < ? ORDER BY pool_id, hour DESC`, chain, h0).Scan(ctx, &states); err != nil {
		return nil, nil, fmt.Errorf("state before %s: %w", h0, err)
	}
	for _, s := range states {
		p, ok := pools[s.PoolID]
		if !ok {
			continue
		}
		sp, ok1 := new(big.Int).SetString(clmath.StripPoint(s.SqrtPrice, 36), 10)
		liq, err := clmath.DecInt(s.Liquidity)
		if !ok1 || err != nil {
			return nil, nil, fmt.Errorf("state of pool %d: %q %q", s.PoolID, s.SqrtPrice, s.Liquidity)
		}
		p.SqrtPrice, p.Tick, p.Liquidity = sp, s.Tick, liq
		var ticks []struct {
			Tick  int64  `bun:"tick"`
			Net   string `bun:"net"`
			Gross string `bun:"gross"`
		}
		if err := tx.NewRaw(`SELECT tick, liquidity_net::text AS net, liquidity_gross::text AS gross FROM osmosis_cl_ticks_hourly
			WHERE chain_id = ? AND pool_id = ? AND hour = ?`, chain, s.PoolID, s.Hour).Scan(ctx, &ticks); err != nil {
			return nil, nil, fmt.Errorf("ticks of pool %d: %w", s.PoolID, err)
		}
		for _, t := range ticks {
			net, err1 := clmath.DecInt(t.Net)
			gross, err2 := clmath.DecInt(t.Gross)
			if err1 != nil || err2 != nil {
				return nil, nil, fmt.Errorf("tick %d of pool %d: %q %q", t.Tick, s.PoolID, t.Net, t.Gross)
			}
			p.Net[t.Tick], p.Gross[t.Tick] = net, gross
		}
	}
	return pools, byID, nil
}

// write stores the state of the touched pools at the end of hour.
func (j CLState) write(ctx context.Context, tx bun.Tx, hour time.Time, pools map[int64]*clmath.CLPool, touched map[int64]bool) (int64, error) {
	chain := j.Market.ChainID
	var n int64
	for id := range touched {
		p := pools[id]
		if p.SqrtPrice == nil {
			continue
		}
		if _, err := tx.NewRaw(`INSERT INTO osmosis_cl_state_hourly (chain_id, pool_id, hour, sqrt_price, tick, liquidity) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (chain_id, pool_id, hour) DO UPDATE SET sqrt_price = EXCLUDED.sqrt_price, tick = EXCLUDED.tick, liquidity = EXCLUDED.liquidity`,
			chain, id, hour, clmath.Fixed(p.SqrtPrice, 36), p.Tick, clmath.Fixed(p.Liquidity, 18)).Exec(ctx); err != nil {
			return 0, fmt.Errorf("state of pool %d: %w", id, err)
		}
		if _, err := tx.NewRaw("DELETE FROM osmosis_cl_ticks_hourly WHERE chain_id = ? AND pool_id = ? AND hour = ?", chain, id, hour).Exec(ctx); err != nil {
			return 0, fmt.Errorf("ticks of pool %d: %w", id, err)
		}
		for _, t := range p.Ticks() {
			if _, err := tx.NewRaw(`INSERT INTO osmosis_cl_ticks_hourly (chain_id, pool_id, hour, tick, liquidity_net, liquidity_gross) VALUES (?, ?, ?, ?, ?, ?)`,
				chain, id, hour, t, clmath.Fixed(p.Net[t], 18), clmath.Fixed(p.Gross[t], 18)).Exec(ctx); err != nil {
				return 0, fmt.Errorf("tick %d of pool %d: %w", t, id, err)
			}
			n++
		}
		n++
	}
	return n, nil
}
