package config

import (
	"fmt"

	"github.com/cosmos/cosmos-sdk/types/bech32"
)

// Perp holds what the perp groups cannot read from the chain.
type Perp struct {
	// GrantRecipients are the accounts whose receipts from the treasury
	// accounts count as grants (/business/expenses_share_by_destination).
	// A change rebuilds the report of treasury outflows (its job's version
	// names the recipients), so the past is reclassified too.
	GrantRecipients []string `yaml:"grant_recipients"`
	// BuyStakeAddress is the buy-and-stake programme's account
	// (/perp/tokenomics/buystake_address_metrics).
	BuyStakeAddress string `yaml:"buystake_address"`
	// TreasurySubDAO are the treasury sub-DAO's wallets
	// (/tokenomics/wallets/treasury_subdao). An address added later is
	// aggregated from the chain's first height on the next run.
	TreasurySubDAO []string `yaml:"treasury_subdao"`
}

func (p *Perp) validate(chains []Chain) []*FieldError {
	var errs []*FieldError
	if p.BuyStakeAddress != "" {
		errs = append(errs, checkDydxAccounts(chains, "perp.buystake_address", []string{p.BuyStakeAddress}, false)...)
	}
	if len(p.TreasurySubDAO) > 0 {
		errs = append(errs, checkDydxAccounts(chains, "perp.treasury_subdao", p.TreasurySubDAO, true)...)
	}
	if len(p.GrantRecipients) == 0 {
		return errs
	}
	return append(errs, checkDydxAccounts(chains, "perp.grant_recipients", p.GrantRecipients, true)...)
}

// checkDydxAccounts checks that accounts are accounts of the dydx chain.
func checkDydxAccounts(chains []Chain, name string, accounts []string, list bool) []*FieldError {
	var errs []*FieldError
	ch, ok := (&Config{Chains: chains}).FirstChain("dydx")
	if !ok {
		return []*FieldError{{Key: name, Msg: "needs a chain of kind dydx"}}
	}
	seen := map[string]bool{}
	for i, a := range accounts {
		key := name
		if list {
			key = fmt.Sprintf("%s[%d]", name, i)
		}
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
