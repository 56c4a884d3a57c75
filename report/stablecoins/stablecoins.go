// Package stablecoins is the contract between the per-chain stablecoin
// jobs (aggregator/stablecoins) and the stablecoins group (api/stablecoins).
package stablecoins

// JobPrefix starts the name of every chain's job: "stablecoins:<chain id>".
const JobPrefix = "stablecoins:"

// Job is the name of the stablecoin job of the EVM chain chainID.
func Job(chainID string) string { return JobPrefix + chainID }

// WhaleUSD is the smallest single movement /stablecoins/whale-alerts lists.
const WhaleUSD = "1000000"

// Buckets are the bucket sizes (time_agg) of the over-time endpoints.
// Buckets start at multiples of their size since the Unix epoch. The job
// keeps the distinct senders of every bucket of each size
// (stablecoin_senders_bucket): distinct counts do not add up across
// minutes, and counting them from the minutes at request time reads a
// whole window of senders.
var Buckets = map[string]int64{"1m": 60, "2m": 120, "5m": 300, "10m": 600, "30m": 1800, "1h": 3600}
