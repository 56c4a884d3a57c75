package dydx

import (
	"fmt"
	"strconv"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/chains"
)

var transfersTable = chains.Table{Name: "dydx_transfers", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "kind", "time", "sender", "sender_number", "recipient", "recipient_number",
	"asset_id", "quantums",
}}

// sendingEvents are the sending module's events and the kind each is.
var sendingEvents = map[string]string{
	"deposit_to_subaccount":    "deposit",
	"withdraw_from_subaccount": "withdraw",
	"create_transfer":          "transfer",
}

// transferRows appends one dydx_transfers row per sending-module event of
// the block's successful txs.
func transferRows(b *chains.Block, out *chains.Rows) error {
	for t := range b.Txs {
		tx := &b.Txs[t]
		if !tx.Succeeded() {
			continue
		}
		for i := range tx.Events {
			ev := &tx.Events[i]
			kind, ok := sendingEvents[ev.Type]
			if !ok {
				continue
			}
			if err := transferRow(b, ev, kind, out); err != nil {
				return fmt.Errorf("height %d tx %d event %d: %w", b.Height, ev.TxIndex, ev.Index, err)
			}
		}
	}
	return nil
}

// transferRow reads {sender, [sender_number], recipient,
// [recipient_number], asset_id, quantums}: a deposit has no sender number,
// a withdrawal no recipient number.
func transferRow(b *chains.Block, ev *chains.Event, kind string, out *chains.Rows) error {
	sender, _ := ev.Get("sender")
	recipient, _ := ev.Get("recipient")
	if sender == "" || recipient == "" {
		return fmt.Errorf("%s: no sender or recipient", ev.Type)
	}
	number := func(key string, want bool) (any, error) {
		if !want {
			return nil, nil
		}
		v, _ := ev.Get(key)
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %q is not a number", ev.Type, key, v)
		}
		return n, nil
	}
	senderNumber, err := number("sender_number", kind != "deposit")
	if err != nil {
		return err
	}
	recipientNumber, err := number("recipient_number", kind != "withdraw")
	if err != nil {
		return err
	}
	asset, err := number("asset_id", true)
	if err != nil {
		return err
	}
	v, _ := ev.Get("quantums")
	q, ok := math.NewIntFromString(v)
	if !ok || q.IsNegative() {
		return fmt.Errorf("%s: quantums %q is not a non-negative integer", ev.Type, v)
	}
	out.Add(transfersTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, kind, b.Time, sender, senderNumber, recipient,
		recipientNumber, asset, q.String())
	return nil
}
