package config

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	sdkmath "cosmossdk.io/math"
)

// CCTP names one chain's Circle CCTP v1 contracts.
type CCTP struct {
	TokenMessenger     string `yaml:"token_messenger"`     // emits DepositForBurn and MintAndWithdraw
	MessageTransmitter string `yaml:"message_transmitter"` // emits MessageReceived (the source domain)
	// Domains maps CCTP domain ids to chain ids, over the standard ones
	// (CCTPDomains).
	Domains map[int64]string `yaml:"domains"`
}

// CCTPDomains are Circle's CCTP domain ids of the chains the stablecoin
// group serves (chain-events.md §7, §11.6).
var CCTPDomains = map[int64]string{
	0: "ethereum-1", 1: "avalanche-43114", 2: "optimism-10", 3: "arbitrum-42161", 6: "base-8453", 7: "polygon-137",
	17: "binance-smart-chain-56",
}

// DomainChain is the chain id of a CCTP domain, or "cctp-domain-N" for a
// domain no chain id is known for.
func (c *CCTP) DomainChain(domain int64) string {
	if c != nil {
		if id, ok := c.Domains[domain]; ok {
			return id
		}
	}
	if id, ok := CCTPDomains[domain]; ok {
		return id
	}
	return "cctp-domain-" + strconv.FormatInt(domain, 10)
}

// LabelCategories are the categories an address label may give.
var LabelCategories = []string{"dex", "cex", "bridge", "lending", "other"}

// DefaultPriceUSD is the price of a token without price_usd: the peg of
// the USD stablecoins (USDStablecoins); other tokens must set price_usd.
const DefaultPriceUSD = "1"

// USDStablecoins are the symbols of the stablecoin group's tokens pegged to
// the US dollar (every token_symbol value but LINK).
var USDStablecoins = []string{"FRAX", "USDY", "USD0", "TUSD", "USDe", "USDL", "DAI", "USDT", "USDC", "AUSD", "USDO",
	"lisUSD", "USDD", "USD1", "vBUSD", "XUSD", "DEUSD", "RLUSD", "USDP", "USDtb", "FRXUSD", "USDf", "USDG"}

// Price is the token's USD price per display unit.
func (t Token) Price() sdkmath.LegacyDec {
	p := t.PriceUSD
	if p == "" {
		p = DefaultPriceUSD
	}
	d, err := sdkmath.LegacyNewDecFromStr(p)
	if err != nil {
		return sdkmath.LegacyZeroDec() // unreachable after validation
	}
	return d
}

// EVMChainNumber is the eth_chainId the node must serve, if known.
func (ch *Chain) EVMChainNumber() (uint64, bool) {
	if ch.EVMChainID != 0 {
		return ch.EVMChainID, true
	}
	i := strings.LastIndexByte(ch.ID, '-')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(ch.ID[i+1:], 10, 64)
	return n, err == nil
}

var decimalString = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

func (ch *Chain) validateEVM(bad func(k, format string, args ...any)) {
	if len(ch.Tokens) == 0 {
		bad(".tokens", "an evm chain needs at least one token contract")
	}
	seen := map[string]bool{}
	for j, t := range ch.Tokens {
		tk := ".tokens[" + strconv.Itoa(j) + "]"
		if !evmAddress.MatchString(t.Address) {
			bad(tk+".address", "%q is not a 0x-prefixed 20-byte address", t.Address)
		} else if a := strings.ToLower(t.Address); seen[a] {
			bad(tk+".address", "%s is listed twice", t.Address)
		} else {
			seen[a] = true
		}
		if t.Symbol == "" {
			bad(tk+".symbol", "is required")
		}
		if t.Decimals < 0 || t.Decimals > 36 {
			bad(tk+".decimals", "must be between 0 and 36")
		}
		switch {
		case t.PriceUSD != "" && !decimalString.MatchString(t.PriceUSD):
			bad(tk+".price_usd", "%q is not a decimal number of USD (e.g. \"1\" or \"14.25\")", t.PriceUSD)
		case t.PriceUSD == "" && t.Symbol != "" && !slices.Contains(USDStablecoins, t.Symbol):
			bad(tk+".price_usd", "is required for %s, which is not a USD stablecoin", t.Symbol)
		}
		if t.Owner != "" && !evmAddress.MatchString(t.Owner) {
			bad(tk+".owner", "%q is not a 0x-prefixed 20-byte address", t.Owner)
		}
	}
	if ch.Confirmations < 0 {
		bad(".confirmations", "must be 0 or more")
	}
	if c := ch.CCTP; c != nil {
		if !evmAddress.MatchString(c.TokenMessenger) {
			bad(".cctp.token_messenger", "%q is not a 0x-prefixed 20-byte address", c.TokenMessenger)
		}
		if !evmAddress.MatchString(c.MessageTransmitter) {
			bad(".cctp.message_transmitter", "%q is not a 0x-prefixed 20-byte address", c.MessageTransmitter)
		}
		for d, id := range c.Domains {
			if d < 0 || id == "" {
				bad(".cctp.domains", "domain %d: needs a domain id of 0 or more and a chain id", d)
			}
		}
	}
	for a, cat := range ch.AddressLabels {
		k := ".address_labels." + a
		switch {
		case !evmAddress.MatchString(a):
			bad(k, "%q is not a 0x-prefixed 20-byte address", a)
		case strings.TrimLeft(a[2:], "0") == "":
			bad(k, "the zero address is always mint_burn")
		}
		if !slices.Contains(LabelCategories, cat) {
			bad(k, "category %q must be one of %s", cat, strings.Join(LabelCategories, ", "))
		}
	}
}

// normalizeEVM lower-cases the addresses of an EVM chain's config, the way
// every table stores them.
func (ch *Chain) normalizeEVM() {
	for i := range ch.Tokens {
		ch.Tokens[i].Address = strings.ToLower(ch.Tokens[i].Address)
		ch.Tokens[i].Owner = strings.ToLower(ch.Tokens[i].Owner)
	}
	if c := ch.CCTP; c != nil {
		c.TokenMessenger, c.MessageTransmitter = strings.ToLower(c.TokenMessenger), strings.ToLower(c.MessageTransmitter)
	}
	if len(ch.AddressLabels) > 0 {
		m := make(map[string]string, len(ch.AddressLabels))
		for a, cat := range ch.AddressLabels {
			m[strings.ToLower(a)] = cat
		}
		ch.AddressLabels = m
	}
}
