// Package perp is the contract between the dYdX report jobs
// (aggregator/perp) and the perp and perp lens groups (api/perp): the perp
// chain, the report tables and the jobs that build them, and the treasury
// modules the reports follow.
package perp

import (
	"github.com/chainlens/chainlens/config"
)

// Chain returns the perp chain: the chain of kind dydx that api.groups.perp.chain names, else the only one.
func Chain(cfg *config.Config) (config.Chain, bool) { return cfg.GroupChain("perp") }

// The perp report tables. Each is built by the aggregator job of the same
// name, except OpenInterestHourly, which the Positions job builds with
// the positions it replays, TraderBuckets and RetentionWeeks, which the
// ActivityBuckets job builds with its counts, TraderMarkets and
// TraderWindowMarkets, which the Traders job keeps, and DepositorBuckets, which the DepositClasses job
// keeps (see JobOf).
const (
	MarketHourly          = "perp_market_hourly"
	TraderDaily           = "perp_trader_daily"
	ActivityBuckets       = "perp_activity_buckets"
	TraderBuckets         = "perp_trader_buckets"
	RetentionWeeks        = "perp_retention_weeks"
	Traders               = "perp_traders"
	TraderMarkets         = "perp_trader_markets"
	TraderWindowMarkets   = "perp_trader_window_markets"
	Liquidations          = "perp_liquidations"
	PriceHourly           = "perp_price_hourly"
	DepositClasses        = "perp_deposit_classes"
	DepositorBuckets      = "perp_depositor_buckets"
	RevenueDaily          = "perp_revenue_daily"
	Supply                = "perp_supply"
	StakingRewardsDaily   = "perp_staking_rewards_daily"
	CommunityPoolSpends   = "perp_community_pool_spends"
	ValidatorStatus       = "perp_validator_status"
	Positions             = "perp_positions"
	OpenInterestHourly    = "perp_open_interest_hourly"
	ModuleBalancesDaily   = "perp_module_balances_daily"
	RewardsDaily          = "perp_rewards_daily"
	ValidatorTokensDaily  = "perp_validator_tokens_daily"
	TreasuryOutflowsDaily = "perp_treasury_outflows_daily"
	BuyStakeHourly        = "perp_buystake_hourly"
	WalletDaily           = "perp_wallet_daily"
	FundingTicks          = "perp_funding_ticks"
)

// Resolutions are the buckets of ActivityBuckets, TraderBuckets,
// DepositClasses and DepositorBuckets: the
// date_trunc units (in UTC) the activity endpoints' time_resolution takes.
var Resolutions = []string{"hour", "day", "week", "month"}

// Jobs names every perp report job.
var Jobs = []string{MarketHourly, TraderDaily, Traders, ActivityBuckets, Liquidations, PriceHourly, DepositClasses,
	RevenueDaily, Supply, StakingRewardsDaily, CommunityPoolSpends, ValidatorStatus, Positions, ModuleBalancesDaily,
	RewardsDaily, ValidatorTokensDaily, TreasuryOutflowsDaily, BuyStakeHourly, WalletDaily, FundingTicks}

// JobOf names the job that builds a perp report table.
func JobOf(table string) string {
	switch table {
	case OpenInterestHourly:
		return Positions
	case TraderBuckets, RetentionWeeks:
		return ActivityBuckets
	case TraderMarkets, TraderWindowMarkets:
		return Traders
	case DepositorBuckets:
		return DepositClasses
	}
	return table
}

// TreasuryModules are the module accounts whose NATIVE balances the
// module_accounts report follows (chain-events.md §6.3), in the order of
// the answer's columns.
var TreasuryModules = []string{"community_treasury", "community_vester", "rewards_treasury", "rewards_vester"}
