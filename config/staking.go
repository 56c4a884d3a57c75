package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cosmos/cosmos-sdk/types/bech32"
)

// LiquidProviders are the liquid-staking providers the staking group
// knows by name.
var LiquidProviders = []string{"stride", "pstake", "quicksilver", "drop"}

// Staking holds what the staking group cannot read from the chain: the
// accounts of each liquid-staking provider on the Cosmos Hub (their host,
// ICA or deposit accounts), and the Hub's transfer channel of each consumer
// chain for the interchain-security rewards received before the provider
// emitted events about them (ICS < v6.1, Gaia < v20).
type Staking struct {
	Providers map[string][]string `yaml:"providers"`
	// ConsumerChannels maps a Hub channel id (channel-569) to the consumer
	// chain id (neutron-1) whose rewards arrive over it.
	ConsumerChannels map[string]string `yaml:"consumer_channels"`
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
	var errs []*FieldError
	for channel, consumer := range s.ConsumerChannels {
		key := "staking.consumer_channels." + channel
		n, ok := strings.CutPrefix(channel, "channel-")
		if _, err := strconv.ParseUint(n, 10, 64); !ok || err != nil {
			errs = append(errs, &FieldError{Key: key, Msg: fmt.Sprintf("%q is not a channel id such as channel-569", channel)})
		}
		if strings.TrimSpace(consumer) == "" {
			errs = append(errs, &FieldError{Key: key, Msg: "needs the consumer chain id, such as neutron-1"})
		}
	}
	if len(s.ConsumerChannels) > 0 {
		if _, ok := (&Config{Chains: chains}).FirstChain("cosmoshub"); !ok {
			errs = append(errs, &FieldError{Key: "staking.consumer_channels", Msg: "needs a chain of kind cosmoshub"})
		}
	}
	if len(s.Providers) == 0 {
		return errs
	}
	ch, ok := (&Config{Chains: chains}).FirstChain("cosmoshub")
	if !ok {
		return append(errs, &FieldError{Key: "staking.providers", Msg: "needs a chain of kind cosmoshub"})
	}
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
