// Package dydx is the dYdX v4 chain kind: the generic cosmos adapter plus
// the perpetual fills of the `match` events (chain-events.md §6.2).
package dydx

import (
	"fmt"
	"strconv"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
)

// Kind is the config kind this adapter serves.
const Kind = "dydx"

// Adapter is the dYdX adapter: everything the generic cosmos adapter
// writes, plus dydx_fills.
type Adapter struct {
	*cosmos.Adapter
}

var _ chains.Adapter = (*Adapter)(nil)

// NewAdapter returns the dYdX adapter for the bech32 prefix (dydx).
func NewAdapter(bech32Prefix string) *Adapter {
	return &Adapter{Adapter: cosmos.NewAdapter(Kind, bech32Prefix, "dydx")}
}

var fillsTable = chains.Table{Name: "dydx_fills", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "role", "time", "address", "subaccount_number", "perpetual_id",
	"size", "notional", "fee", "is_liquidation", "is_deleverage", "is_buy", "insurance_delta",
}}

// Tables lists the generic tables and the dYdX ones: fills, the perpetual
// and oracle market catalogs, oracle prices, subaccount transfers.
func (a *Adapter) Tables() []chains.Table {
	return append(a.Adapter.Tables(), fillsTable, perpetualsTable, marketsTable, pricesTable, transfersTable, nativeTable,
		fundingParamsTable, premiumVotesTable, fundingEpochsTable)
}

// Rows appends the generic rows, then the fills, the subaccount transfers
// and the oracle prices.
// Matches are the events of the block proposer's MsgProposedOperations tx;
// a failed tx (or any other tx) fills nothing.
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
			if ev := &tx.Events[i]; ev.Type == "match" {
				if err := fillRows(b, ev, out); err != nil {
					return fmt.Errorf("height %d tx %d event %d: %w", b.Height, ev.TxIndex, ev.Index, err)
				}
			}
		}
	}
	for i := range b.Events {
		if ev := &b.Events[i]; ev.Type == "match" {
			if err := fillRows(b, ev, out); err != nil {
				return fmt.Errorf("height %d block event %d: %w", b.Height, ev.Index, err)
			}
		}
	}
	if err := transferRows(b, out); err != nil {
		return err
	}
	if err := fundingRows(b, out); err != nil {
		return err
	}
	return priceRows(b, out)
}

// fillRows appends the taker and maker rows of one match event. The fill's
// notional is |maker quote delta + maker order fee + maker builder fee|
// (the quote deltas include the fees), its size |taker perpetual delta|.
func fillRows(b *chains.Block, ev *chains.Event, out *chains.Rows) error {
	ints := map[string]math.Int{}
	for _, k := range []string{"maker_quote_balance_delta_quote_quantums", "maker_order_fee_quote_quantums", "taker_order_fee_quote_quantums",
		"taker_perpetual_quantums_delta_base_quantums", "maker_perpetual_quantums_delta_base_quantums"} {
		v, ok := ev.Get(k)
		n, okInt := math.NewIntFromString(v)
		if !ok || !okInt {
			return fmt.Errorf("match: %s %q is not an integer", k, v)
		}
		ints[k] = n
	}
	insurance, err := optionalInt(ev, "insurance_fund_delta_quote_quantums")
	if err != nil {
		return err
	}
	builder, err := optionalInt(ev, "maker_builder_fee_quantums")
	if err != nil {
		return err
	}
	notional := ints["maker_quote_balance_delta_quote_quantums"].Add(ints["maker_order_fee_quote_quantums"]).Add(builder).Abs()
	size := ints["taker_perpetual_quantums_delta_base_quantums"].Abs()
	perp, err := intAttr(ev, "perpetual_id")
	if err != nil {
		return err
	}
	liq, _ := ev.Get("is_liquidation")
	del, _ := ev.Get("is_deleverage")
	for _, side := range []struct{ role, owner, number, fee, delta string }{
		{"taker", "taker_subaccount", "taker_subaccount_number", "taker_order_fee_quote_quantums", "taker_perpetual_quantums_delta_base_quantums"},
		{"maker", "maker_subaccount", "maker_subaccount_number", "maker_order_fee_quote_quantums", "maker_perpetual_quantums_delta_base_quantums"},
	} {
		owner, ok := ev.Get(side.owner)
		if !ok || owner == "" {
			return fmt.Errorf("match: no %s", side.owner)
		}
		number, err := intAttr(ev, side.number)
		if err != nil {
			return err
		}
		out.Add(fillsTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, side.role, b.Time, owner, number, perp,
			size.String(), notional.String(), ints[side.fee].String(), liq == "true", del == "true", ints[side.delta].IsPositive(),
			insurance.String())
	}
	return nil
}

// optionalInt reads an integer attribute that older chain versions do not
// emit (absent or empty: 0).
func optionalInt(ev *chains.Event, key string) (math.Int, error) {
	v, ok := ev.Get(key)
	if !ok || v == "" {
		return math.ZeroInt(), nil
	}
	n, okInt := math.NewIntFromString(v)
	if !okInt {
		return math.Int{}, fmt.Errorf("match: %s %q is not an integer", key, v)
	}
	return n, nil
}

func intAttr(ev *chains.Event, key string) (int64, error) {
	v, _ := ev.Get(key)
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("match: %s %q is not a number", key, v)
	}
	return n, nil
}
