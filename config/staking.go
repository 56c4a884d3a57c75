package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cosmos/cosmos-sdk/types/bech32"
)

// LiquidProviders are the liquid-staking providers the staking group
// knows by name.
var LiquidProviders = []string{"stride", "pstake", "quicksilver", "drop"}

// Staking holds what the staking group cannot read from the chain: the
// accounts of each liquid-staking provider on the Cosmos Hub (their host,
// ICA or deposit accounts).
type Staking struct {
	Providers map[string][]string `yaml:"providers"`
}

// Provider returns the provider an account belongs to, if any.
func (s *Staking) Provider(account string) (string, bool) {
	for name, accounts := range s.Providers {
		if slices.Contains(accounts, account) {
			return name, true
		}
	}
	return "", false
}

func (s *Staking) validate(chains []Chain) []*FieldError {
	if len(s.Providers) == 0 {
		return nil
	}
	ch, ok := (&Config{Chains: chains}).FirstChain("cosmoshub")
	if !ok {
		return []*FieldError{{Key: "staking.providers", Msg: "needs a chain of kind cosmoshub"}}
	}
	var errs []*FieldError
	owner := map[string]string{}
	for name, accounts := range s.Providers {
		key := "staking.providers." + name
		if !slices.Contains(LiquidProviders, name) {
			errs = append(errs, &FieldError{Key: key, Msg: "must be one of " + strings.Join(LiquidProviders, ", ")})
		}
		for i, a := range accounts {
			k := fmt.Sprintf("%s[%d]", key, i)
			hrp, _, err := bech32.DecodeAndConvert(a)
			switch {
			case err != nil:
				errs = append(errs, &FieldError{Key: k, Msg: fmt.Sprintf("%q is not a bech32 address: %v", a, err)})
			case hrp != ch.Bech32Prefix:
				errs = append(errs, &FieldError{Key: k, Msg: fmt.Sprintf("%q is not an account of chain %s (prefix %s)", a, ch.ID, ch.Bech32Prefix)})
			case owner[a] != "":
				errs = append(errs, &FieldError{Key: k, Msg: fmt.Sprintf("%q is also an account of %s", a, owner[a])})
			}
			owner[a] = name
		}
	}
	return errs
}
