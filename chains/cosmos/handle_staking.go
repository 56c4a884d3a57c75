package cosmos

import (
	"fmt"

	"github.com/chainlens/chainlens/chains"
)

var stakingTable = chains.Table{Name: "staking_events", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "coin_index", "msg_index", "kind", "delegator", "validator", "src_validator", "denom", "amount",
}}

// stakingKinds maps staking and distribution event types to row kinds.
var stakingKinds = map[string]string{
	"delegate":                    "delegate",
	"unbond":                      "unbond",
	"redelegate":                  "redelegate",
	"complete_unbonding":          "complete_unbonding",
	"complete_redelegation":       "complete_redelegation",
	"withdraw_rewards":            "withdraw_rewards",
	"withdraw_commission":         "withdraw_commission",
	"create_validator":            "create_validator",
	"cancel_unbonding_delegation": "cancel_unbonding",
}

// stakingRows turns staking and distribution events into rows, one per coin.
// SDK ≤ 0.47 writes delegate amounts as bare integers in the bond denom;
// those rows get the denom "".
func stakingRows(b *chains.Block, out *chains.Rows) error {
	return eachEvent(b, func(ev *chains.Event) error {
		kind, ok := stakingKinds[ev.Type]
		if !ok {
			return nil
		}
		delegator, _ := ev.Get("delegator")
		validator, _ := ev.Get("validator")
		src := ""
		if ev.Type == "redelegate" || ev.Type == "complete_redelegation" {
			src, _ = ev.Get("source_validator")
			validator, _ = ev.Get("destination_validator")
		}
		amount, _ := ev.Get("amount")
		coins, err := parseStakeAmount(amount)
		if err != nil {
			return fmt.Errorf("%s event %d of tx %d: %w", ev.Type, ev.Index, ev.TxIndex, err)
		}
		if len(coins) == 0 { // e.g. a withdrawal of zero rewards: keep the action
			coins = []chains.Coin{{Denom: "", Amount: "0"}}
		}
		for i, c := range coins {
			out.Add(stakingTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, i, ev.MsgIndex, kind, delegator, validator, src, c.Denom, c.Amount)
		}
		return nil
	})
}

func parseStakeAmount(s string) ([]chains.Coin, error) {
	if s != "" && isDigits(s) {
		return []chains.Coin{{Amount: s}}, nil
	}
	return chains.ParseCoins(s)
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
