// Package stablecoins is the contract between the per-chain stablecoin
// jobs (aggregator/stablecoins) and the stablecoins group (api/stablecoins).
package stablecoins

// JobPrefix starts the name of every chain's job: "stablecoins:<chain id>".
const JobPrefix = "stablecoins:"

// Job is the name of the stablecoin job of the EVM chain chainID.
func Job(chainID string) string { return JobPrefix + chainID }

// WhaleUSD is the smallest single movement /stablecoins/whale-alerts lists.
const WhaleUSD = "1000000"
