package config

import (
	"fmt"

	"github.com/cosmos/cosmos-sdk/types/bech32"
)

// Perp holds what the perp groups cannot read from the chain.
type Perp struct {
	// GrantRecipients are the accounts whose receipts from the treasury
	// accounts count as grants (/business/expenses_share_by_destination).
	// A change applies to what the perp_trading job aggregates next; reset
	// its watermark to reclassify the past.
	GrantRecipients []string `yaml:"grant_recipients"`
}

func (p *Perp) validate(chains []Chain) []*FieldError {
	var errs []*FieldError
	if len(p.GrantRecipients) == 0 {
		return nil
	}
	ch, ok := (&Config{Chains: chains}).FirstChain("dydx")
	if !ok {
		return []*FieldError{{Key: "perp.grant_recipients", Msg: "needs a chain of kind dydx"}}
	}
	seen := map[string]bool{}
	for i, a := range p.GrantRecipients {
		key := fmt.Sprintf("perp.grant_recipients[%d]", i)
		hrp, _, err := bech32.DecodeAndConvert(a)
		switch {
		case err != nil:
			errs = append(errs, &FieldError{Key: key, Msg: fmt.Sprintf("%q is not a bech32 address: %v", a, err)})
		case hrp != ch.Bech32Prefix:
			errs = append(errs, &FieldError{Key: key, Msg: fmt.Sprintf("%q is not an account of chain %s (prefix %s)", a, ch.ID, ch.Bech32Prefix)})
		case seen[a]:
			errs = append(errs, &FieldError{Key: key, Msg: fmt.Sprintf("%q is listed twice", a)})
		}
		seen[a] = true
	}
	return errs
}
