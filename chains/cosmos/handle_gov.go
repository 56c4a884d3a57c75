package cosmos

import (
	"fmt"
	"strconv"

	"github.com/chainlens/chainlens/chains"
)

var govTable = chains.Table{Name: "gov_events", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "coin_index", "msg_index", "kind", "proposal_id", "address", "detail", "denom", "amount",
}}

// govRows turns x/gov events into rows: submissions, deposits (one row per
// coin), votes (detail = the option JSON or name) and end-block results.
func govRows(b *chains.Block, out *chains.Rows) error {
	return eachEvent(b, func(ev *chains.Event) error {
		var kind, address, detail, amount string
		switch ev.Type {
		case "submit_proposal":
			kind = "submit"
			address, _ = ev.Get("proposal_proposer")
			detail, _ = ev.Get("proposal_messages")
		case "proposal_deposit":
			kind = "deposit"
			address, _ = ev.Get("depositor")
			amount, _ = ev.Get("amount")
		case "proposal_vote":
			kind = "vote"
			address, _ = ev.Get("voter")
			detail, _ = ev.Get("option")
		case "active_proposal", "inactive_proposal":
			kind = "result"
			detail, _ = ev.Get("proposal_result")
		default:
			return nil
		}
		idText, ok := ev.Get("proposal_id")
		if !ok {
			return nil // some SDK versions emit the deposit before the id; nothing to attach it to
		}
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil {
			return fmt.Errorf("%s event %d of tx %d: proposal_id %q", ev.Type, ev.Index, ev.TxIndex, idText)
		}
		coins, err := chains.ParseCoins(amount)
		if err != nil {
			return fmt.Errorf("%s event %d of tx %d: %w", ev.Type, ev.Index, ev.TxIndex, err)
		}
		if len(coins) == 0 {
			coins = []chains.Coin{{Amount: "0"}}
		}
		for i, c := range coins {
			out.Add(govTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, i, ev.MsgIndex, kind, id, address, detail, c.Denom, c.Amount)
		}
		return nil
	})
}
