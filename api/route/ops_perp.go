package route

// Perpetuals exchange analytics group ({perp_url}): 7 operations.

// perpOps lists the perpetuals exchange analytics operations in the order of the interface.
func perpOps() []Operation {
	return []Operation{
		get(Perp, PerpSupply, "Transparency: supply",
			[]Param{
				{Name: "metric", In: InQuery, Type: String, Default: "total_supply",
					Enum: supplyMetrics(), Description: "supply metric"},
				modeParam(),
			},
			Desc(obj(
				opts(Num, supplyMetrics()...),
				one(componentsProp()),
			), "the requested metric in NATIVE")),
		get(Perp, PerpStakingAPR, "Transparency: staking APR",
			[]Param{modeParam()},
			Obj(
				P("staking_apr", Desc(Num(), "percent")),
				Opt("components", obj(each(Num, "rewards_usdc_30d", "rewards_native_30d", "bonded_native",
					"price_native"))),
			)),
		get(Perp, PerpTransparencyFees, "Transparency: trading fees",
			[]Param{modeParam()},
			Desc(obj(
				each(Num, "trading_fees_24h", "trading_fees_30d", "trading_fees_total"),
				one(componentsProp()),
			), "net trading fees in USDC")),
		get(Perp, PerpCRM, "Trader list with filters", crmParams(), Arr(trader())),
		get(Perp, PerpChainRevenue, "Chain revenue", dateRange(),
			Arr(Obj(
				P("labels", Str()),
				P("source", strEnum("trading_fees", "tx_fees")),
				P("amount", Desc(Num(), "USDC")),
			))),
		get(Perp, PerpStakingSupply, "Staking supply", dateRange(),
			Arr(obj(
				one(P("labels", Str())),
				each(nNum, "stakingSupply", "stakingApr", "protocolRevenue", "buybackFee", "buybackFeeShare",
					"buybackDeposit", "historicUsers"),
			))),
		get(Perp, PerpBuyStake, "Buy-and-stake address metrics", dateRange(),
			Desc(Arr(obj(
				one(P("labels", Str())),
				each(nNum, "priceNATIVE", "nativeAcquired", "stakingBalance", "liquidBalanceNATIVE",
					"liquidBalanceUSDC", "stakingRewardsUnclaimedNATIVE", "stakingRewardsUnclaimedUSDC",
					"stakingRewardsClaimedNATIVE", "stakingRewardsClaimedUSDC"),
			)), "hourly, newest first")),
	}
}

// supplyMetrics are the metrics of /perp/transparency/supply.
func supplyMetrics() []string {
	return []string{"max_supply", "burnt_supply", "total_supply", "minted_supply", "locked_supply", "circulating_supply"}
}

// modeParam is the prod/debug switch of the transparency endpoints.
func modeParam() Param {
	return Param{Name: "mode", In: InQuery, Type: String, Default: "prod", Enum: []string{"prod", "debug"},
		Description: "debug adds the components of the value"}
}

// componentsProp is the debug breakdown of a transparency value.
func componentsProp() Property {
	return Opt("components", Desc(Map(Num()), "with mode=debug: the terms the value was computed from"))
}

// crmSortFields are the sort_by values of /perp/crm.
func crmSortFields() []string {
	return []string{"user", "all_time_trades", "all_time_volume_usdc", "all_time_fees_usdc", "all_time_avg_trade_size",
		"last_30d_trades", "last_30d_volume_usdc", "last_30d_fees_usdc", "last_30d_avg_trade_size",
		"first_activity_timestamp", "last_activity_timestamp", "all_time_tx_count", "labels", "tier"}
}

// crmBounds are the inclusive min_/max_ bounds of /perp/crm, in the order of the interface.
func crmBounds() []Param {
	fields := []struct{ name, desc string }{
		{"all_time_trades", "all-time trades"},
		{"all_time_volume_usdc", "all-time volume in USDC"},
		{"all_time_fees_usdc", "all-time fees in USDC"},
		{"all_time_avg_trade_size", "all-time average trade size"},
		{"last_30d_trades", "last-30-day trades"},
		{"last_30d_volume_usdc", "last-30-day volume in USDC"},
		{"last_30d_fees_usdc", "last-30-day fees in USDC"},
		{"last_30d_avg_trade_size", "last-30-day average trade size"},
		{"all_time_tx_count", "all-time transaction count"},
	}
	var out []Param
	for _, f := range fields {
		out = append(out,
			query("min_"+f.name, Number, "inclusive lower bound on "+f.desc),
			query("max_"+f.name, Number, "inclusive upper bound on "+f.desc))
	}
	return out
}

// crmParams are the query parameters of /perp/crm, all optional.
func crmParams() []Param {
	return concat(
		[]Param{
			query("address", Bech32, "exact user address"),
			{Name: "sort_by", In: InQuery, Type: String, Default: "all_time_volume_usdc", Enum: crmSortFields(),
				Description: "field to sort by; nulls sort last"},
			{Name: "sort_order", In: InQuery, Type: String, Default: "DESC", Enum: []string{"ASC", "DESC", "asc", "desc"},
				Description: "sort direction"},
			limitParam("10", 50),
			offsetParam(),
		},
		crmBounds(),
		[]Param{
			query("first_activity_after", Date, "first activity after this time (exclusive)"),
			query("first_activity_before", Date, "first activity before this time (exclusive)"),
			query("last_activity_after", Date, "last activity after this time (exclusive)"),
			query("last_activity_before", Date, "last activity before this time (exclusive)"),
		},
	)
}

// trader is the perpetuals trader record of /perp/crm.
func trader() *Schema {
	return obj(
		one(P("user", Str())),
		each(nNum, "all_time_trades", "all_time_volume_usdc", "all_time_fees_usdc", "all_time_avg_trade_size"),
		one(
			P("all_time_top_3_markets", Arr(Str())),
			P("all_time_top_3_volumes", Arr(Num())),
		),
		each(nNum, "last_30d_trades", "last_30d_volume_usdc", "last_30d_fees_usdc", "last_30d_avg_trade_size"),
		one(
			P("last_30d_top_3_markets", Arr(Str())),
			P("last_30d_top_3_volumes", Arr(Num())),
		),
		each(nStr, "first_activity_timestamp", "last_activity_timestamp"),
		one(
			P("all_time_tx_count", nNum()),
			Opt("labels", Arr(Str())),
			Opt("tier", nNum()),
		),
		opts(Num, "liquid_balance_native", "staking_balance_native", "total_balance_native", "total_equity_usdc",
			"total_free_collateral_usdc", "subaccounts_count"),
		one(Opt("total_trading_rewards", Desc(Str(), "decimal NATIVE"))),
		opts(Num, "open_positions_count", "total_unrealized_pnl_usdc", "asset_positions_count"),
		opts(Bool, "has_open_positions", "margin_enabled"),
		one(Opt("last_position_update_height", Str())),
	)
}
