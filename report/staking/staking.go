// Package staking is the contract between the Cosmos Hub report jobs
// (aggregator/liquidstaking, aggregator/icsrewards) and the multi-chain
// staking group (api/staking).
package staking

import "github.com/chainlens/chainlens/config"

// Kind is the chain kind of the provider chain.
const Kind = "cosmoshub"

// Chain returns the provider chain: the chain of kind cosmoshub that api.groups.staking.chain names, else the only one.
func Chain(cfg *config.Config) (config.Chain, bool) { return cfg.GroupChain("staking") }

// The jobs of the provider chain, by name.
const (
	// JobLiquidStaking builds the liquid-staking providers' flows and balances.
	JobLiquidStaking = "liquid_staking"
	// JobICSRewards builds the consumer chains' reward shares.
	JobICSRewards = "ics_rewards"
)
