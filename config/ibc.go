package config

import (
	"fmt"
	"regexp"
	"strconv"
)

// IBC declares the IBC channels between chains, by chain-registry chain
// name, for GET /ibc/v1/source/{source}/destination/{destination}.
type IBC struct {
	// Registry lists chain-registry _IBC/<a>-<b>.json files; their channels
	// are added to Channels.
	Registry []string `yaml:"registry"`
	// Channels are channel ends written from one chain's side.
	Channels []IBCChannel `yaml:"channels"`
}

// IBCChannel is a channel of Chain to Counterparty.
type IBCChannel struct {
	Chain               string `yaml:"chain"`                // chain-registry name, e.g. osmosis
	Channel             string `yaml:"channel"`              // e.g. channel-0
	Port                string `yaml:"port"`                 // default transfer
	Counterparty        string `yaml:"counterparty"`         // chain-registry name, e.g. cosmoshub
	CounterpartyChannel string `yaml:"counterparty_channel"` // e.g. channel-141
	CounterpartyPort    string `yaml:"counterparty_port"`    // default transfer
}

// registryIBC is the part of a chain-registry _IBC file that chainlens reads.
type registryIBC struct {
	Chain1 struct {
		ChainName string `json:"chain_name"`
	} `json:"chain_1"`
	Chain2 struct {
		ChainName string `json:"chain_name"`
	} `json:"chain_2"`
	Channels []struct {
		Chain1 struct {
			ChannelID string `json:"channel_id"`
			PortID    string `json:"port_id"`
		} `json:"chain_1"`
		Chain2 struct {
			ChannelID string `json:"channel_id"`
			PortID    string `json:"port_id"`
		} `json:"chain_2"`
	} `json:"channels"`
}

// applyRegistry adds the channels of the registry files.
func (b *IBC) applyRegistry(baseDir string) (int, error) {
	for i, p := range b.Registry {
		var f registryIBC
		if err := readJSON(resolve(baseDir, p), &f); err != nil {
			return i, err
		}
		if f.Chain1.ChainName == "" || f.Chain2.ChainName == "" {
			return i, fmt.Errorf("%s: chain_1.chain_name and chain_2.chain_name are required", p)
		}
		for _, c := range f.Channels {
			b.Channels = append(b.Channels, IBCChannel{Chain: f.Chain1.ChainName, Channel: c.Chain1.ChannelID, Port: c.Chain1.PortID,
				Counterparty: f.Chain2.ChainName, CounterpartyChannel: c.Chain2.ChannelID, CounterpartyPort: c.Chain2.PortID})
		}
	}
	return 0, nil
}

var (
	chainName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	channelID = regexp.MustCompile(`^channel-[0-9]+$`)
)

// applyDefaults names the chains of the known kinds after their kind (the
// chain-registry names of those chains) and fills the ports.
func (b *IBC) applyDefaults(chains []Chain) {
	for i := range chains {
		if ch := &chains[i]; ch.Name == "" && defaultPrefix[ch.Kind] != "" {
			ch.Name = ch.Kind
		}
	}
	for i := range b.Channels {
		c := &b.Channels[i]
		if c.Port == "" {
			c.Port = "transfer"
		}
		if c.CounterpartyPort == "" {
			c.CounterpartyPort = "transfer"
		}
	}
}

func (b *IBC) validate(chains []Chain) []*FieldError {
	var errs []*FieldError
	bad := func(key, format string, args ...any) {
		errs = append(errs, &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	names := map[string]string{}
	for i, ch := range chains {
		key := "chains[" + strconv.Itoa(i) + "].name"
		switch {
		case ch.Name == "":
		case !chainName.MatchString(ch.Name):
			bad(key, "%q is not a chain-registry name (lower-case letters, digits, '-')", ch.Name)
		case names[ch.Name] != "":
			bad(key, "chain name %q is already used by chain %s; set name on one of them", ch.Name, names[ch.Name])
		default:
			names[ch.Name] = ch.ID
		}
	}
	seen := map[[2]string]string{}
	for i, c := range b.Channels {
		key := "ibc.channels[" + strconv.Itoa(i) + "]"
		if !chainName.MatchString(c.Chain) {
			bad(key+".chain", "%q is not a chain-registry name (lower-case letters, digits, '-')", c.Chain)
		}
		if !chainName.MatchString(c.Counterparty) {
			bad(key+".counterparty", "%q is not a chain-registry name (lower-case letters, digits, '-')", c.Counterparty)
		}
		if c.Chain == c.Counterparty && c.Chain != "" {
			bad(key+".counterparty", "must differ from chain")
		}
		if !channelID.MatchString(c.Channel) {
			bad(key+".channel", "%q is not a channel id such as channel-0", c.Channel)
		}
		if !channelID.MatchString(c.CounterpartyChannel) {
			bad(key+".counterparty_channel", "%q is not a channel id such as channel-0", c.CounterpartyChannel)
		}
		for _, end := range [][2]string{{c.Chain, c.Channel}, {c.Counterparty, c.CounterpartyChannel}} {
			if prev, dup := seen[end]; dup {
				bad(key, "channel %s of %s is already declared (%s)", end[1], end[0], prev)
			}
			seen[end] = key
		}
	}
	return errs
}
