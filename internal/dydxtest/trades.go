package dydxtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chainlens/chainlens/store"
	"github.com/uptrace/bun"
)

// Trades are Count fills of one trader, a second apart from at.
type Trades struct {
	Addr, At string // At in time.DateTime, UTC
	Count    int
	// Deposit, when set, makes them Count deposits of that many USDC
	// into the trader's subaccount instead of fills.
	Deposit int64
	// Market is the fills' perpetual: market m's fills are worth m+1 USDC
	// and pay m × 0.01 USDC of fees (market 0's: 1 USDC, no fees).
	Market int32
}

// TradesOf is n fills of addr, a second apart from at (time.DateTime, UTC).
func TradesOf(addr, at string, n int) Trades { return Trades{Addr: addr, At: at, Count: n} }

// DepositsOf is n deposits of usdc USDC each by addr, a second apart
// from at (time.DateTime, UTC).
func DepositsOf(addr, at string, n int, usdc int64) Trades {
	return Trades{Addr: addr, At: at, Count: n, Deposit: usdc}
}

// IndexTrades writes the blocks, fills and deposits of history (one per height,
// in time order, after a first block at start and before a last one at
// tip) as the dydx indexer would, and calls runJobs after every batch of
// heights (and after the last), so that report buckets fill up over
// several runs.
func IndexTrades(t testing.TB, db *bun.DB, chain string, start, tip time.Time, history []Trades, batch int, runJobs func()) {
	t.Helper()
	ctx := context.Background()
	type fill struct {
		addr    string
		at      time.Time
		deposit int64
		market  int32
	}
	var fills []fill
	for _, h := range history {
		at, err := time.Parse(time.DateTime, h.At)
		if err != nil {
			t.Fatal(err)
		}
		for i := range h.Count {
			fills = append(fills, fill{h.Addr, at.Add(time.Duration(i) * time.Second), h.Deposit, h.Market})
		}
	}
	slices.SortStableFunc(fills, func(a, b fill) int { return a.at.Compare(b.at) })
	last := int64(len(fills)) + 2
	if err := store.EnsurePartitions(ctx, db, chain, []string{"blocks", "dydx_fills", "dydx_transfers"}, 1, last); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	block := func(h int64, at time.Time) {
		exec("INSERT INTO blocks (chain_id, height, hash, time, proposer, app_hash, num_txs) VALUES (?, ?, ?, ?, 'p', 'a', 0)",
			chain, h, fmt.Sprint(h), at)
	}
	upTo := func(h int64) {
		exec(`INSERT INTO sync_state (chain_id, kind, next_height) VALUES (?, 'dydx', ?)
			ON CONFLICT (chain_id) DO UPDATE SET next_height = EXCLUDED.next_height`, chain, h+1)
		runJobs()
	}
	block(1, start)
	for i, f := range fills {
		h := int64(i) + 2
		block(h, f.at)
		if f.deposit > 0 {
			exec(`INSERT INTO dydx_transfers (chain_id, height, tx_index, event_index, kind, time, sender, recipient, recipient_number, asset_id, quantums)
				VALUES (?, ?, 0, 0, 'deposit', ?, ?, ?, 0, 0, ?)`, chain, h, f.at, f.addr, f.addr, f.deposit*1_000_000)
		} else {
			exec(`INSERT INTO dydx_fills (chain_id, height, tx_index, event_index, role, time, address, subaccount_number, perpetual_id,
				size, notional, fee, is_liquidation, is_deleverage)
			VALUES (?, ?, 0, 0, 'taker', ?, ?, 0, ?, 1, ?, ?, false, false)`, chain, h, f.at, f.addr, f.market,
				(int64(f.market)+1)*1_000_000, int64(f.market)*10_000)
		}
		if (i+1)%batch == 0 {
			upTo(h)
		}
	}
	block(last, tip)
	upTo(last)
}
