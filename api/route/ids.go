package route

// The operations' identities, one exported value per operation. Handlers
// bind to these values (api.Handlers is keyed by ID) and the table builds
// each operation from its value, so a handler can only bind an operation
// that exists: a misspelt one does not compile, and TestEveryOperationIsBound
// (internal/app) fails on one that is not bound.
var (
	// engagement group
	EngagementCampaignMulti = ID{"GET", "/campaign/multiple-cointype"} // Get the most relevant campaign for a user using addresses of different coin types
	EngagementCampaign      = ID{"GET", "/campaign/{address}"}         // Get the most relevant campaign for an address
	EngagementClick         = ID{"GET", "/click"}                      // Redirect a link click
	EngagementTrack         = ID{"POST", "/track"}                     // Track an event
	EngagementSDKTrack      = ID{"POST", "/sdk/track"}                 // Track an event sent from the engagement client SDK

	// dex group
	DexPoolsAPRRangeV2   = ID{"GET", "/v2/pools_apr_range"}                               // Pools APR range (v2)
	DexCLAPRv2           = ID{"GET", "/cl/v2/apr/rewards/{pool}"}                         // Concentrated-liquidity pool position APR (v2)
	DexPairChart         = ID{"GET", "/pairs/v1/historical/{pool_id}/chart"}              // Token pair historical chart
	DexTokenChart        = ID{"GET", "/tokens/v2/historical/{asset}/chart"}               // Token historical chart
	DexRealTimePrice     = ID{"GET", "/tokens/v2/real-time/{asset}/price"}                // Token real-time price
	DexToken             = ID{"GET", "/tokens/v2/{asset}"}                                // Token data
	DexPoolFees          = ID{"GET", "/fees/v1/pools"}                                    // Pools fees
	DexPoolStream        = ID{"GET", "/stream/pool/v1/all"}                               // Pool stream data
	DexLPEstimation      = ID{"GET", "/lp/v1/rewards/estimation/{bech32Address}"}         // Rewards estimation for a bech32 address
	DexRewardsByDay      = ID{"GET", "/rewards/token/{address}/{denom}"}                  // Rewards estimation for an address and a denomination
	DexRewardDenoms      = ID{"GET", "/rewards/token/{address}"}                          // Rewards estimation for an address
	DexPosition          = ID{"GET", "/cl/v1/position/last/id/{positionId}"}              // Position info
	DexIBCStatus         = ID{"GET", "/ibc/v1/source/{source}/destination/{destination}"} // IBC chain status
	DexPoolLiquidity     = ID{"GET", "/pools/liquidity/{pool_id}/over_time"}              // Pool liquidity over time
	DexDepthCurrent      = ID{"GET", "/pools/depth/{pool_id}/current"}                    // Pool depth now
	DexDepthOverTime     = ID{"GET", "/pools/depth/{pool_id}/over_time"}                  // Pool depth over time
	DexStakingAPR        = ID{"GET", "/apr"}                                              // Staking APR
	DexPoolsAPR          = ID{"GET", "/pools_apr"}                                        // Pools APR
	DexPoolsAPRRange     = ID{"GET", "/pools_apr_range"}                                  // Pools APR range
	DexCLAPRv1           = ID{"GET", "/cl/v1/apr/rewards/{pool}"}                         // Concentrated-liquidity pool position APR
	DexSupply            = ID{"GET", "/supply/v1/metrics"}                                // Supply metrics
	DexPortfolioOverTime = ID{"GET", "/users/portfolio/over_time"}                        // Portfolio over time
	DexPortfolioCurrent  = ID{"GET", "/users/portfolio/current"}                          // Current portfolio
	DexClosedLimitOrders = ID{"GET", "/users/limit_orders/history/closed"}                // Closed limit orders history
	DexPairsSummary      = ID{"GET", "/pairs/v2/summary"}                                 // Pairs summary (v2)
	DexChainRevenue      = ID{"GET", "/tokenomics/chain_revenue"}                         // Chain revenue
	DexTradingMetrics    = ID{"GET", "/trading_metrics"}                                  // Trading metrics
	DexEarnStrategies    = ID{"GET", "/earn/strategies"}                                  // Earn strategies
	DexEarnBalance       = ID{"GET", "/earn/strategies/{strategy}/balance/{address}"}     // Balance for an earn strategy
	DexEarnAPR           = ID{"GET", "/earn/strategies/{strategy}/apr"}                   // APR of an earn strategy
	DexEarnTVL           = ID{"GET", "/earn/strategies/{strategy}/tvl"}                   // TVL of an earn strategy

	// dex lens group
	DexLensPoolListings          = ID{"GET", "/aux/pool_listings"}                           // Pool listings
	DexLensActiveWhales          = ID{"GET", "/activity/active_whales"}                      // Active whales
	DexLensCumulativeVolume      = ID{"GET", "/kpi/cumulative_trading_volume"}               // Cumulative trading volume KPI
	DexLensCumulativeProtocolR   = ID{"GET", "/kpi/cumulative_protocol_revenue"}             // Cumulative protocol revenue KPI
	DexLensCumulativeSupplySideR = ID{"GET", "/kpi/cumulative_supply_side_revenue"}          // Cumulative supply-side revenue KPI
	DexLensLiquidityFlow         = ID{"GET", "/liquidity/liquidity_flow"}                    // Liquidity flow
	DexLensAssetsInChain         = ID{"GET", "/tokenomics/assets_in_chain"}                  // Assets in chain
	DexLensTopAssetsDateRange    = ID{"GET", "/trading/volume/top_assets_date_range"}        // Top assets by volume in a date range
	DexLensTopAssetsLastPeriod   = ID{"GET", "/trading/volume/top_assets_last_period_hours"} // Top assets by volume over the last period of hours

	// perp group
	PerpSupply           = ID{"GET", "/perp/transparency/supply"}                 // Transparency: supply
	PerpStakingAPR       = ID{"GET", "/perp/transparency/staking-apr"}            // Transparency: staking APR
	PerpTransparencyFees = ID{"GET", "/perp/transparency/trading-fees"}           // Transparency: trading fees
	PerpCRM              = ID{"GET", "/perp/crm"}                                 // Trader list with filters
	PerpChainRevenue     = ID{"GET", "/perp/tokenomics/chain_revenue"}            // Chain revenue
	PerpStakingSupply    = ID{"GET", "/perp/tokenomics/staking_supply"}           // Staking supply
	PerpBuyStake         = ID{"GET", "/perp/tokenomics/buystake_address_metrics"} // Buy-and-stake address metrics

	// perp lens group
	PerpLensRetention              = ID{"GET", "/activity/retention_rate"}                // Activity retention rate
	PerpLensDistributionByActivity = ID{"GET", "/activity/user_distribution_by_activity"} // User distribution by activity
	PerpLensDistributionByDeposits = ID{"GET", "/activity/user_distribution_by_deposits"} // User distribution by deposits
	PerpLensDistributionByTrades   = ID{"GET", "/activity/user_distribution_by_trades"}   // User distribution by trades
	PerpLensExpensesShare          = ID{"GET", "/business/expenses_share_by_destination"} // Expenses share by destination
	PerpLensPnLSummary             = ID{"GET", "/business/pnl_summary"}                   // PnL summary
	PerpLensCommunityPoolUsage     = ID{"GET", "/governance/community_pool_usage"}        // Community pool usage
	PerpLensLiquidationFlow        = ID{"GET", "/liquidation/flow_by_market"}             // Liquidation flow by market
	PerpLensLiquidationList        = ID{"GET", "/liquidation/list"}                       // Liquidation list
	PerpLensMarketListings         = ID{"GET", "/aux/market_listings"}                    // Market listings
	PerpLensFundingRate            = ID{"GET", "/trading/funding_rate"}                   // Funding rate
	PerpLensOpenInterest           = ID{"GET", "/trading/open_interest"}                  // Open interest
	PerpLensTradersRanking         = ID{"GET", "/trading/traders_ranking"}                // Traders ranking
	PerpLensTradesCount            = ID{"GET", "/trading/trades_count"}                   // Trades count
	PerpLensTradingFees            = ID{"GET", "/trading/trading_fees"}                   // Trading fees
	PerpLensShareByPool            = ID{"GET", "/trading/trading_share_by_pool"}          // Trading share by pool
	PerpLensValidatorListings      = ID{"GET", "/aux/validator_listings"}                 // Validator listings
	PerpLensShareByValidator       = ID{"GET", "/staking/share_by_validator"}             // Staking share by validator
	PerpLensModuleAccounts         = ID{"GET", "/tokenomics/wallets/module_accounts"}     // Module account balances
	PerpLensTreasurySubDAO         = ID{"GET", "/tokenomics/wallets/treasury_subdao"}     // Treasury sub-DAO wallets
	PerpLensTotalRewards           = ID{"GET", "/total_rewards"}                          // Total rewards
	PerpLensUsersPeriodRewards     = ID{"GET", "/users_period_rewards"}                   // Users period rewards
	PerpLensAPRSplit               = ID{"GET", "/apr_split"}                              // APR split
	PerpLensVolumeOverview         = ID{"GET", "/trading/trading_volume_overview"}        // Trading volume overview

	// stablecoins group
	StablecoinsVolumePerToken   = ID{"GET", "/stablecoins/volume-per-token"}             // Volume per token
	StablecoinsIssuing          = ID{"GET", "/stablecoins/issuing/over-time"}            // Issuing over time
	StablecoinsActiveSenders    = ID{"GET", "/stablecoins/active-senders/over-time"}     // Active senders over time
	StablecoinsVolumeByCategory = ID{"GET", "/stablecoins/volume-by-category/over-time"} // Volume by category over time
	StablecoinsWhaleAlerts      = ID{"GET", "/stablecoins/whale-alerts"}                 // Whale alerts
	StablecoinsBridgeInflow     = ID{"GET", "/stablecoins/bridge/total-inflow"}          // Bridge inflow
	StablecoinsBridgeOutflow    = ID{"GET", "/stablecoins/bridge/total-outflow"}         // Bridge outflow
	StablecoinsBridgeNetflow    = ID{"GET", "/stablecoins/bridge/total-netflow"}         // Bridge netflow
	StablecoinsCrossChain       = ID{"GET", "/stablecoins/bridge/cross-chain-volume"}    // Bridge cross-chain volume
	StablecoinsNetflowOverTime  = ID{"GET", "/stablecoins/bridge/netflow-over-time"}     // Bridge netflow over time
	StablecoinsCategoryInflow   = ID{"GET", "/stablecoins/category/total-inflow"}        // Category total inflow
	StablecoinsCategoryOutflow  = ID{"GET", "/stablecoins/category/total-outflow"}       // Category total outflow
	StablecoinsCategoryNetflow  = ID{"GET", "/stablecoins/category/total-netflow"}       // Category total netflow

	// dex2 group
	Dex2Pairs      = ID{"GET", "/dex/pairs"}                         // Dex pairs
	Dex2Liquidity  = ID{"GET", "/dex/liquidity/{denom0}/{denom1}"}   // Dex liquidity for a denomination pair
	Dex2Price      = ID{"GET", "/dex/price/{denom0}/{denom1}"}       // Dex price for a denomination pair
	Dex2Trades     = ID{"GET", "/dex/trades/{denom0}/{denom1}"}      // Dex trades for a denomination pair
	Dex2SwapVolume = ID{"GET", "/dex/swap-volume/{denom0}/{denom1}"} // Dex swap volume for a denomination pair
	Dex2Volume     = ID{"GET", "/trading/volume"}                    // Trading volume

	// staking group
	StakingRevenueShareByConsumer = ID{"GET", "/aez/revenue_share_by_consumer"}    // Revenue share by consumer
	StakingShareByProvider        = ID{"GET", "/staking/liquid/share_by_provider"} // Liquid staking share by provider
	StakingFlowByProvider         = ID{"GET", "/staking/liquid/flow_by_provider"}  // Liquid staking flow by provider

	// smart account group
	SmartAccountAuthenticators = ID{"GET", "/v3/smartAccount/{smart_account}/authenticators"}          // Authenticators of an abstract account
	SmartAccountAccountsByAuth = ID{"GET", "/v3/authenticators/{authenticator}/smartAccounts"}         // Abstract accounts by authenticator
	SmartAccountDetailsByAuth  = ID{"GET", "/v3/authenticators/{authenticator}/smartAccounts/details"} // Abstract account details by authenticator
	SmartAccountPermissions    = ID{"GET", "/v3/address/{address}/permissions"}                        // Smart account permissions of an address

	// admin API
	AdminListCampaigns   = ID{"GET", "/admin/campaigns"}              // List the campaigns with their status and counts
	AdminImportCampaigns = ID{"POST", "/admin/campaigns"}             // Import a campaigns file (validated whole; every problem listed)
	AdminExportCampaigns = ID{"GET", "/admin/campaigns/export"}       // Export every campaign and audience as a campaigns file
	AdminGetCampaign     = ID{"GET", "/admin/campaigns/{id}"}         // One campaign in the import format, with its audiences
	AdminPauseCampaign   = ID{"POST", "/admin/campaigns/{id}/pause"}  // Pause a campaign
	AdminResumeCampaign  = ID{"POST", "/admin/campaigns/{id}/resume"} // Resume a campaign
	AdminCampaignReport  = ID{"GET", "/admin/campaigns/{id}/report"}  // A campaign's report: impressions, clicks, conversions and value
)
