package cosmos

import (
	"fmt"

	"github.com/chainlens/chainlens/chains"
)

var transfersTable = chains.Table{Name: "transfers", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "coin_index", "msg_index", "kind", "sender", "recipient", "denom", "amount",
}}

// bankRows turns transfer, coinbase and burn events into transfer rows.
// (coin_spent/coin_received repeat the same movements and are not counted.)
func bankRows(b *chains.Block, out *chains.Rows) error {
	return eachEvent(b, func(ev *chains.Event) error {
		var kind, sender, recipient, amount string
		switch ev.Type {
		case "transfer":
			kind = "transfer"
			sender, _ = ev.Get("sender")
			recipient, _ = ev.Get("recipient")
		case "coinbase":
			kind = "coinbase"
			recipient, _ = ev.Get("minter")
		case "burn":
			kind = "burn"
			sender, _ = ev.Get("burner")
		default:
			return nil
		}
		amount, _ = ev.Get("amount")
		coins, err := chains.ParseCoins(amount)
		if err != nil {
			return fmt.Errorf("%s event %d of tx %d: %w", ev.Type, ev.Index, ev.TxIndex, err)
		}
		for i, c := range coins {
			out.Add(transfersTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, i, ev.MsgIndex, kind, sender, recipient, c.Denom, c.Amount)
		}
		return nil
	})
}

var balanceTable = chains.Table{Name: "balance_changes", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "coin_index", "address", "denom", "delta",
}}

// balanceRows turns coin_spent and coin_received events into signed
// balance changes.
func balanceRows(b *chains.Block, out *chains.Rows) error {
	return eachEvent(b, func(ev *chains.Event) error {
		var who, sign string
		switch ev.Type {
		case "coin_spent":
			who, _ = ev.Get("spender")
			sign = "-"
		case "coin_received":
			who, _ = ev.Get("receiver")
		default:
			return nil
		}
		amount, _ := ev.Get("amount")
		coins, err := chains.ParseCoins(amount)
		if err != nil {
			return fmt.Errorf("%s event %d of tx %d: %w", ev.Type, ev.Index, ev.TxIndex, err)
		}
		for i, c := range coins {
			out.Add(balanceTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, i, who, c.Denom, sign+c.Amount)
		}
		return nil
	})
}
