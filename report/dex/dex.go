// Package dex is the contract between the Osmosis report jobs
// (aggregator/dex) and the dex and dex lens groups (api/dex): the dex
// chain, its pricing settings (Market), the jobs' names, and the bar rules
// of the candle tables. Both sides import it; neither imports the other.
package dex

import (
	"github.com/chainlens/chainlens/config"
)

// Chain returns the dex chain: the chain of kind osmosis that api.groups.dex.chain names, else the only one.
func Chain(cfg *config.Config) (config.Chain, bool) { return cfg.GroupChain("dex") }

// The report jobs of the dex chain, by name (aggregator_jobs.name). An
// answer's freshness is the height the job whose tables it reads has
// aggregated to.
const (
	JobPrices          = "dex_prices"
	JobVolume          = "dex_volume"
	JobLiquidity       = "dex_liquidity"
	JobRevenue         = "dex_revenue"
	JobCandles         = "dex_candles"
	JobActivity        = "dex_activity"
	JobPositions       = "dex_positions"
	JobCLState         = "dex_cl_state"
	JobSupply          = "dex_supply"
	JobAssets          = "dex_assets"
	JobEarn            = "dex_earn"
	JobLimitOrders     = "dex_limit_orders"
	JobStaking         = "dex_staking"
	JobPoolRewards     = "dex_pool_rewards"
	JobCLEarnings      = "dex_cl_earnings"
	JobRewardsReceived = "dex_rewards_received"
	JobLPHoldings      = "dex_lp_holdings"
	JobPortfolio       = "dex_portfolio"
)
