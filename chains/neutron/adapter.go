// Package neutron is the Neutron chain kind: the generic cosmos adapter plus
// the x/dex tick updates (chain-events.md §9), from which the second dex
// chain's reports are built: current reserves per tick, pairs, and fills.
package neutron

import (
	"fmt"
	"strconv"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
)

// Kind is the config kind this adapter serves.
const Kind = "neutron"

// Adapter is the Neutron adapter: everything the generic cosmos adapter
// writes, plus neutron_dex_tick_updates.
type Adapter struct {
	*cosmos.Adapter
}

var _ chains.Adapter = (*Adapter)(nil)

// NewAdapter returns the Neutron adapter for the bech32 prefix (neutron).
func NewAdapter(bech32Prefix string) *Adapter {
	return &Adapter{Adapter: cosmos.NewAdapter(Kind, bech32Prefix, "neutron")}
}

var tickTable = chains.Table{Name: "neutron_dex_tick_updates", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "tx_hash", "time", "token0", "token1", "maker_denom",
	"tick_index", "fee", "tranche_key", "reserves", "swap_in", "swap_out",
}}

// Tables lists the generic tables and neutron_dex_tick_updates.
func (a *Adapter) Tables() []chains.Table { return append(a.Adapter.Tables(), tickTable) }

// Rows appends the generic rows, then one row per TickUpdate event of a
// successful tx or of the block (limit-order expiry).
func (a *Adapter) Rows(b *chains.Block, out *chains.Rows) error {
	if err := a.Adapter.Rows(b, out); err != nil {
		return err
	}
	for t := range b.Txs {
		tx := &b.Txs[t]
		if !tx.Succeeded() {
			continue
		}
		for i := range tx.Events {
			if ev := &tx.Events[i]; ev.Type == "TickUpdate" {
				if err := tickRow(b, tx.Hash, ev, out); err != nil {
					return fmt.Errorf("height %d tx %d event %d: %w", b.Height, ev.TxIndex, ev.Index, err)
				}
			}
		}
	}
	for i := range b.Events {
		if ev := &b.Events[i]; ev.Type == "TickUpdate" {
			if err := tickRow(b, "", ev, out); err != nil {
				return fmt.Errorf("height %d block event %d: %w", b.Height, ev.Index, err)
			}
		}
	}
	return nil
}

// tickRow appends one TickUpdate: the new reserves of the maker denom
// (TokenIn) at TickIndex (taker to maker) of a pool (Fee) or a limit-order
// tranche (TrancheKey), and, when a swap filled against it, the taker's
// amount in (the other denom) and out (the maker denom).
func tickRow(b *chains.Block, txHash string, ev *chains.Event, out *chains.Rows) error {
	get := func(k string) string { v, _ := ev.Get(k); return v }
	token0, token1, maker := get("TokenZero"), get("TokenOne"), get("TokenIn")
	if token0 == "" || token1 == "" || (maker != token0 && maker != token1) {
		return fmt.Errorf("TickUpdate: TokenZero %q, TokenOne %q, TokenIn %q", token0, token1, maker)
	}
	tick, err := strconv.ParseInt(get("TickIndex"), 10, 64)
	if err != nil {
		return fmt.Errorf("TickUpdate: TickIndex: %w", err)
	}
	reserves, ok := math.NewIntFromString(get("Reserves"))
	if !ok || reserves.IsNegative() {
		return fmt.Errorf("TickUpdate: Reserves %q", get("Reserves"))
	}
	var fee any
	tranche := get("TrancheKey")
	if f := get("Fee"); f != "" {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return fmt.Errorf("TickUpdate: Fee: %w", err)
		}
		fee = n
	} else if tranche == "" {
		return fmt.Errorf("TickUpdate: neither Fee nor TrancheKey")
	}
	var swapIn, swapOut any
	if in := get("SwapAmountIn"); in != "" {
		i, ok1 := math.NewIntFromString(in)
		o, ok2 := math.NewIntFromString(get("SwapAmountOut"))
		if !ok1 || !ok2 {
			return fmt.Errorf("TickUpdate: SwapAmountIn %q, SwapAmountOut %q", in, get("SwapAmountOut"))
		}
		swapIn, swapOut = i.String(), o.String()
	}
	out.Add(tickTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, txHash, b.Time, token0, token1, maker,
		tick, fee, tranche, reserves.String(), swapIn, swapOut)
	return nil
}
