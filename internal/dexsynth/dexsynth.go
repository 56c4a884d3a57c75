// Package dexsynth writes a synthetic history of an Osmosis-kind chain —
// hourly blocks, balancer pools and their swaps — into the domain tables
// the indexer fills, so the real aggregator jobs build a long history of
// report tables for benchmarks (a year takes a minute, not a year of
// indexing). Every number is integer arithmetic from a seeded generator,
// so two runs write the same rows.
package dexsynth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/store"
)

// Options shape the history.
type Options struct {
	ChainID string
	// End is the time of the last block; the first is Hours before it.
	End   time.Time
	Hours int
	// Pools are the pools to create, each a pair of denoms with its
	// starting reserves in base units (the first pool's quote should be the
	// USD anchor so every denom gets a price).
	Pools []Pool
	// SwapsPerHour is the swaps per pool per hour, alternating direction.
	SwapsPerHour int
	Seed         uint64
}

// Pool is one balancer pool of the history.
type Pool struct {
	ID             int64
	Base, Quote    string
	ReserveBase    int64
	ReserveQuote   int64
	SwapFeePermill int64 // e.g. 2000 = 0.2 %
}

// DefaultPools are 10 pools over 6 denoms, each priced through uusdc.
func DefaultPools() []Pool {
	return []Pool{
		{1, "uosmo", "uusdc", 50_000_000_000_000, 90_000_000_000_000, 2000},
		{2, "uatom", "uusdc", 5_000_000_000_000, 85_000_000_000_000, 2000},
		{3, "uatom", "uosmo", 2_000_000_000_000, 18_000_000_000_000, 2000},
		{4, "uweth", "uusdc", 40_000_000_000, 120_000_000_000_000, 1000},
		{5, "uion", "uosmo", 1_000_000_000_000, 3_000_000_000_000, 3000},
		{6, "utia", "uusdc", 3_000_000_000_000, 15_000_000_000_000, 2000},
		{7, "utia", "uosmo", 1_000_000_000_000, 2_800_000_000_000, 2000},
		{8, "uweth", "uosmo", 10_000_000_000, 16_000_000_000_000, 2000},
		{9, "uion", "uusdc", 500_000_000_000, 2_700_000_000_000, 3000},
		{10, "uatom", "uweth", 1_000_000_000_000, 5_600_000_000, 2000},
	}
}

// Written counts the rows Generate wrote.
type Written struct {
	Blocks, Pools, Swaps int
	LastHeight           int64
}

// Generate writes the history at heights 1..Hours (one block per hour) in
// one transaction and sets the chain's checkpoint after it. The chain must
// have no indexed heights.
func Generate(ctx context.Context, db *bun.DB, o Options) (Written, error) {
	var w Written
	if o.Hours < 1 || len(o.Pools) == 0 || o.SwapsPerHour < 1 {
		return w, fmt.Errorf("dexsynth: need hours, pools and swaps per hour")
	}
	var n int
	if err := db.NewRaw(`SELECT count(*) FROM sync_state WHERE chain_id = ?`, o.ChainID).Scan(ctx, &n); err != nil {
		return w, fmt.Errorf("dexsynth: %w", err)
	}
	if n > 0 {
		return w, fmt.Errorf("dexsynth: chain %s already has indexed data; use an empty database", o.ChainID)
	}
	last := int64(o.Hours)
	if err := store.EnsurePartitions(ctx, db, o.ChainID, []string{"blocks", "osmosis_pools", "osmosis_pool_liquidity", "osmosis_swaps"}, 1, last); err != nil {
		return w, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	start := o.End.UTC().Add(-time.Duration(o.Hours-1) * time.Hour).Truncate(time.Second)
	conn, err := db.Conn(ctx)
	if err != nil {
		return w, fmt.Errorf("dexsynth: %w", err)
	}
	defer conn.Close()
	// COPY runs on the connection, inside the transaction begun on it.
	err = conn.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var blocks, pools, liq, swaps [][]any
		for h := int64(1); h <= last; h++ {
			t := start.Add(time.Duration(h-1) * time.Hour)
			blocks = append(blocks, []any{o.ChainID, h, fmt.Sprintf("%064X", h), t, "synthetic", "", o.SwapsPerHour * len(o.Pools)})
		}
		t0 := start
		for i, p := range o.Pools {
			fee := math.LegacyNewDec(p.SwapFeePermill).QuoInt64(1_000_000)
			pools = append(pools, []any{o.ChainID, int64(1), 0, i, 0, t0, p.ID, "balancer", "synthetic", []string{p.Base, p.Quote}, fee.String()})
			liq = append(liq,
				[]any{o.ChainID, int64(1), 0, i, 0, 0, p.ID, "create", "synthetic", p.Base, math.NewInt(p.ReserveBase).String()},
				[]any{o.ChainID, int64(1), 0, i, 1, 0, p.ID, "create", "synthetic", p.Quote, math.NewInt(p.ReserveQuote).String()})
		}
		// Each pool's price walks by up to ±0.5 % an hour around its
		// starting ratio (in parts per million); swaps alternate direction
		// so reserves stay near their start.
		walk := make([]int64, len(o.Pools))
		for i := range walk {
			walk[i] = 1_000_000
		}
		for h := int64(2); h <= last; h++ {
			t := start.Add(time.Duration(h-1) * time.Hour)
			for i, p := range o.Pools {
				walk[i] = max(200_000, min(5_000_000, walk[i]+int64(rng.IntN(10_001))-5_000))
				for s := 0; s < o.SwapsPerHour; s++ {
					// quote per base at this swap, in parts per million of the start ratio
					ppm := walk[i] + int64(rng.IntN(201)) - 100
					baseAmt := p.ReserveBase / 100_000 * int64(1+rng.IntN(20))
					quoteAmt := math.NewInt(baseAmt).Mul(math.NewInt(p.ReserveQuote)).Mul(math.NewInt(ppm)).
						Quo(math.NewInt(p.ReserveBase)).Quo(math.NewInt(1_000_000))
					in, inAmt, out, outAmt := p.Base, math.NewInt(baseAmt), p.Quote, quoteAmt
					if s%2 == 1 {
						in, inAmt, out, outAmt = p.Quote, quoteAmt, p.Base, math.NewInt(baseAmt)
					}
					txIndex := i*o.SwapsPerHour + s
					swaps = append(swaps, []any{o.ChainID, h, txIndex, 0, 0, t, p.ID, fmt.Sprintf("osmo1synthetic%04d", rng.IntN(500)),
						in, inAmt.String(), out, outAmt.String()})
				}
			}
		}
		copies := []struct {
			table string
			cols  []string
			rows  [][]any
		}{
			{"blocks", []string{"chain_id", "height", "hash", "time", "proposer", "app_hash", "num_txs"}, blocks},
			{"osmosis_pools", []string{"chain_id", "height", "tx_index", "event_index", "msg_index", "time", "pool_id", "type", "creator", "denoms", "swap_fee"}, pools},
			{"osmosis_pool_liquidity", []string{"chain_id", "height", "tx_index", "event_index", "coin_index", "msg_index", "pool_id", "kind", "sender", "denom", "delta"}, liq},
			{"osmosis_swaps", []string{"chain_id", "height", "tx_index", "event_index", "msg_index", "time", "pool_id", "sender", "denom_in", "amount_in", "denom_out", "amount_out"}, swaps},
		}
		for _, c := range copies {
			if _, err := store.CopyRows(ctx, conn, c.table, c.cols, c.rows); err != nil {
				return err
			}
		}
		if _, err := tx.NewRaw(`INSERT INTO sync_state (chain_id, kind, next_height, last_time, tip_height) VALUES (?, 'osmosis', ?, ?, ?)`,
			o.ChainID, last+1, start.Add(time.Duration(last-1)*time.Hour), last).Exec(ctx); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		w = Written{Blocks: len(blocks), Pools: len(pools), Swaps: len(swaps), LastHeight: last}
		return nil
	})
	if err != nil {
		return Written{}, fmt.Errorf("dexsynth: %w", err)
	}
	return w, nil
}
