package synthosmosis

import (
	"fmt"
	"math/big"
	"strings"

	abci "github.com/cometbft/cometbft/abci/types"
)

// ledger is the chain's bank: every address's balance of every denom,
// kept by applying each block's coin_spent and coin_received events, so
// that what the node answers about balances is what its events say.
type ledger map[string]map[string]*big.Int // denom → address → amount

func (l ledger) add(addr, denom string, v *big.Int) {
	m := l[denom]
	if m == nil {
		m = map[string]*big.Int{}
		l[denom] = m
	}
	if m[addr] == nil {
		m[addr] = new(big.Int)
	}
	m[addr].Add(m[addr], v)
}

// apply applies the coin events; a balance that would go negative is an
// error of the generator.
func (l ledger) apply(events []abci.Event) error {
	for _, e := range events {
		if e.Type != "coin_spent" && e.Type != "coin_received" {
			continue
		}
		var who, amount string
		for _, a := range e.Attributes {
			switch a.Key {
			case "spender", "receiver":
				who = a.Value
			case "amount":
				amount = a.Value
			}
		}
		if amount == "" {
			continue
		}
		for _, c := range strings.Split(amount, ",") {
			i := 0
			for i < len(c) && c[i] >= '0' && c[i] <= '9' {
				i++
			}
			v, ok := new(big.Int).SetString(c[:i], 10)
			if !ok || i == len(c) {
				return fmt.Errorf("coin %q", c)
			}
			if e.Type == "coin_spent" {
				v.Neg(v)
			}
			l.add(who, c[i:], v)
			if l[c[i:]][who].Sign() < 0 {
				return fmt.Errorf("%s's %s would be %s", who, c[i:], l[c[i:]][who])
			}
		}
	}
	return nil
}
