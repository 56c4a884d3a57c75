package route

// Perpetuals exchange lens reports group ({perp_url}): 24 operations.

// perpLensOps lists the perpetuals lens operations in the order of the interface.
func perpLensOps() []Operation {
	return []Operation{
		get(PerpLens, PerpLensRetention, "Activity retention rate", dateRange(),
			Desc(Arr(obj(
				one(P("labels", Desc(Str(), "ISO week start"))),
				one(P("new_users", Desc(Num(), "addresses whose first trade fell in the week"))),
				each(Num, "week1", "week2", "week3", "week4"),
			)), "weekly cohorts; weekN in percent of the cohort")),
		get(PerpLens, PerpLensDistributionByActivity, "User distribution by activity",
			concat(dateRange(), []Param{timeResolution("hour", "hour", "day", "week")}),
			Arr(obj(
				one(P("labels", Str())),
				each(Num, "new_users", "active_users", "inactive_users", "total_users"),
			))),
		get(PerpLens, PerpLensDistributionByDeposits, "User distribution by deposits",
			concat(dateRange(), []Param{timeResolution("hour", lensResolutions()...)}),
			Arr(obj(
				one(P("labels", Str())),
				each(Num, "small_depositors", "medium_depositors", "large_depositors"),
			))),
		get(PerpLens, PerpLensDistributionByTrades, "User distribution by trades",
			concat(dateRange(), []Param{timeResolution("hour", lensResolutions()...)}),
			Arr(obj(
				one(P("labels", Str())),
				each(Num, "at_least_100", "at_least_10", "at_least_1"),
			))),
		get(PerpLens, PerpLensExpensesShare, "Expenses share by destination",
			concat(dateRange(), []Param{
				{Name: "destinations", In: InQuery, Type: String, Multi: true, Default: "total",
					Enum:        []string{"trading_rewards", "grants", "validators", "other", "total"},
					Description: "destination columns"},
			}),
			Desc(Arr(Series()), "daily USD outflows of the treasury module accounts by destination")),
		get(PerpLens, PerpLensPnLSummary, "PnL summary", dateRange(),
			Desc(Arr(obj(
				one(P("labels", Str())),
				each(Num, "revenue", "expenses", "pnl"),
			)), "daily, USD")),
		get(PerpLens, PerpLensCommunityPoolUsage, "Community pool usage", nil,
			Desc(Arr(Obj(
				P("block_height", nNum()),
				P("block_timestamp", nStr()),
				P("proposal_id", nNum()),
				P("token_amount", nNum()),
				P("token_symbol", nStr()),
				P("receivers_count", nNum()),
				P("vote_yes", nNum()),
				P("vote_no", nNum()),
				P("vote_veto", nNum()),
				P("vote_abstain", nNum()),
			)), "newest first")),
		get(PerpLens, PerpLensLiquidationFlow, "Liquidation flow by market",
			concat(dateRange(), []Param{marketParam("total"), granularity("hour")}),
			Arr(Obj(
				P("labels", Str()),
				P("total_long_liquidation_volume", Num()),
				P("top_long_liquidation", Num()),
				P("top_long_liquidation_tx_id", nStr()),
				P("total_short_liquidation_volume", Num()),
				P("top_short_liquidation", Num()),
				P("top_short_liquidation_tx_id", nStr()),
			))),
		get(PerpLens, PerpLensLiquidationList, "Liquidation list", dateRange(),
			Desc(Arr(obj(
				each(Str, "labels", "tx_hash", "account", "market"),
				one(P("position", strEnum("long", "short"))),
				each(Num, "liquidated_value", "liquidated_value_usdc", "perp_insurance_delta"),
			)), "newest first")),
		get(PerpLens, PerpLensMarketListings, "Market listings", nil,
			Desc(Arr(Obj(
				P("key", Desc(Str(), "market ticker")),
				P("query_key", Desc(Num(), "perpetual id")),
				P("name", Str()),
				P("daily_volume", Desc(Num(), "USDC over 24 h")),
			)), "ordered by volume")),
		get(PerpLens, PerpLensFundingRate, "Funding rate",
			concat(dateRange(), []Param{
				granularity("day"),
				{Name: "market", In: InQuery, Type: String, Default: "0",
					Description: "market ticker or perpetual id; total is not accepted"},
			}),
			Arr(Obj(P("labels", Str()), P("funding_rate", Desc(Num(), "average 1-hour rate, percent"))))),
		get(PerpLens, PerpLensOpenInterest, "Open interest",
			concat(dateRange(), []Param{marketParam("total"), granularity("hour")}),
			Arr(Obj(P("labels", Str()), P("open_interest", Desc(Num(), "USDC notional"))))),
		get(PerpLens, PerpLensTradersRanking, "Traders ranking",
			[]Param{
				{Name: "volumeType", In: InQuery, Type: String, Default: "total",
					Enum: []string{"total", "maker", "taker"}, Description: "volume side"},
			},
			Desc(Arr(obj(
				one(P("address", Str())),
				each(Num, "total_volume", "cumulative_volume", "volume_1d", "volume_7d", "volume_30d"),
			)), "top 100 traders, USDC")),
		get(PerpLens, PerpLensTradesCount, "Trades count",
			concat(dateRange(), []Param{granularity("hour")}),
			Arr(Obj(P("labels", Str()), P("total_trades", Num())))),
		get(PerpLens, PerpLensTradingFees, "Trading fees",
			concat(dateRange(), []Param{
				marketParam("total"),
				query("pool", String, "alias of market"),
			}),
			Arr(Obj(P("labels", Str()), P("total_fees", Desc(Num(), "USDC"))))),
		get(PerpLens, PerpLensShareByPool, "Trading share by pool", dateRange(),
			Desc(Arr(seriesWith("others", "total")), "daily USDC volume of the ten largest markets, others and total")),
		get(PerpLens, PerpLensValidatorListings, "Validator listings", nil,
			Desc(Arr(Obj(
				P("validator", Desc(Str(), "operator address")),
				P("token_amount", Desc(Num(), "bonded NATIVE")),
			)), "ordered by token_amount")),
		get(PerpLens, PerpLensShareByValidator, "Staking share by validator",
			concat(dateRange(), []Param{
				{Name: "validators", In: InQuery, Type: String, Multi: true, Default: "total",
					Description: "operator addresses from /aux/validator_listings, or total"},
			}),
			Desc(Arr(Series()), "daily NATIVE bonded per requested validator")),
		get(PerpLens, PerpLensModuleAccounts, "Module account balances",
			concat(dateRange(), []Param{unitParam("NATIVE or USD balances", "native", "dollar")}),
			Arr(obj(
				one(P("labels", Str())),
				each(Num, "community_treasury", "community_treasury_vester", "rewards_treasury",
					"rewards_treasury_vester"),
			))),
		get(PerpLens, PerpLensTreasurySubDAO, "Treasury sub-DAO wallets",
			concat(dateRange(), []Param{
				{Name: "balance_categories", In: InQuery, Type: String, Multi: true, Default: "total",
					Enum:        []string{"native_liquid", "native_staked", "usdc", "other", "total"},
					Description: "balance category columns"},
			}),
			Desc(Arr(NullableSeries()), "daily USD balances of the treasury sub-DAO wallets by category; null where a balance has no USD price")),
		get(PerpLens, PerpLensTotalRewards, "Total rewards",
			concat(dateRange(), []Param{rewardsUnit()}),
			Arr(obj(
				one(P("labels", Str())),
				each(Num, "total_rewards", "increase"),
			))),
		get(PerpLens, PerpLensUsersPeriodRewards, "Users period rewards",
			concat(dateRange(), []Param{rewardsUnit()}),
			Desc(Arr(Obj(P("address", Str()), P("rewards", Num()))), "descending, at most 1000 rows")),
		get(PerpLens, PerpLensAPRSplit, "APR split", dateRange(),
			Desc(Arr(obj(
				one(P("labels", Str())),
				each(Num, "1d_trailing_avg", "7d_trailing_avg", "30d_trailing_avg"),
			)), "daily, percent")),
		get(PerpLens, PerpLensVolumeOverview, "Trading volume overview", dateRange(),
			Desc(Arr(obj(
				one(P("labels", Str())),
				each(Num, "volume_usdc", "trades_count", "unique_traders"),
			)), "daily, all markets")),
	}
}

// lensResolutions are the bucket sizes of the perp lens endpoints.
func lensResolutions() []string { return []string{"hour", "day", "week", "month"} }

// timeResolution is the time_resolution parameter with the given default and values.
func timeResolution(def string, vals ...string) Param {
	return Param{Name: "time_resolution", In: InQuery, Type: String, Default: def, Enum: vals,
		Description: "bucket size"}
}

// granularity is the granularity parameter with the given default.
func granularity(def string) Param {
	return Param{Name: "granularity", In: InQuery, Type: String, Default: def, Enum: lensResolutions(),
		Description: "bucket size"}
}

// marketParam is the market filter with the given default.
func marketParam(def string) Param {
	return Param{Name: "market", In: InQuery, Type: String, Default: def,
		Description: "market ticker, perpetual id, or total"}
}

// unitParam is the unit parameter, default native, with the given values.
func unitParam(desc string, vals ...string) Param {
	return Param{Name: "unit", In: InQuery, Type: String, Default: "native", Enum: vals, Description: desc}
}

// rewardsUnit is the unit parameter of the trading rewards endpoints.
func rewardsUnit() Param {
	return unitParam("rewards unit; token is the same as native", "token", "dollar", "native")
}
