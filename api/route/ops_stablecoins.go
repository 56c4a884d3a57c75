package route

// Stablecoin analytics group ({stablecoin_url}): 13 operations.

// stablecoinOps lists the stablecoin operations in the order of the interface.
func stablecoinOps() []Operation {
	return []Operation{
		get(Stablecoins, StablecoinsVolumePerToken, "Volume per token",
			[]Param{scChainID(), scTokenSymbol(), scTimeRange()},
			Desc(Arr(Obj(P("token_name", Str()), P("token_symbol", Str()), P("total_amount", Num()))),
				"USD transfer volume per token in the window, descending")),
		get(Stablecoins, StablecoinsIssuing, "Issuing over time",
			[]Param{scChainID(), scTokenSymbol(), scTimeRange(), scTimeAgg()},
			Desc(Arr(obj(
				each(Str, "labels", "token_name", "token_symbol"),
				each(Num, "minted", "burned"),
			)), "one row per bucket and token, USD")),
		get(Stablecoins, StablecoinsActiveSenders, "Active senders over time",
			[]Param{scTimeRange(), scTimeAgg(), scChainID()},
			Arr(Obj(
				P("labels", Str()),
				P("active_senders", Arr(obj(
					one(P("active_senders", Num())),
					each(Str, "token_name", "token_symbol"),
					one(P("token_denom", Desc(Str(), "token contract address"))),
				))),
			))),
		get(Stablecoins, StablecoinsVolumeByCategory, "Volume by category over time",
			[]Param{scTimeRange(), scTimeAgg(), scChainID()},
			Arr(Obj(
				P("labels", Str()),
				P("volume_by_category", Arr(Obj(P("category", Str()), P("total_volume", Num())))),
			))),
		get(Stablecoins, StablecoinsWhaleAlerts, "Whale alerts",
			[]Param{limitParam("5", 1000)},
			Desc(Arr(obj(
				each(Str, "chain_id", "block_timestamp", "block_height", "token_denom", "token_symbol", "token_name",
					"sender", "receiver"),
				one(P("amount_usd", Num())),
			)), "newest first")),
		get(Stablecoins, StablecoinsBridgeInflow, "Bridge inflow", scBridgeParams(), Arr(chainAmount())),
		get(Stablecoins, StablecoinsBridgeOutflow, "Bridge outflow", scBridgeParams(), Arr(chainAmount())),
		get(Stablecoins, StablecoinsBridgeNetflow, "Bridge netflow", scBridgeParams(), Arr(chainAmount())),
		get(Stablecoins, StablecoinsCrossChain, "Bridge cross-chain volume", scBridgeParams(),
			Arr(obj(
				each(Str, "src_chain_id", "dst_chain_id"),
				one(P("total_amount", Num())),
			))),
		get(Stablecoins, StablecoinsNetflowOverTime, "Bridge netflow over time",
			[]Param{scChainID(), scTokenSymbol(), scTimeRange(), scTimeAgg(), scChainIDs()},
			Desc(Arr(seriesWith("total")), "net bridged USD per bucket and requested chain; total over all chains")),
		get(Stablecoins, StablecoinsCategoryInflow, "Category total inflow", scCategoryParams(),
			Arr(categoryAmount())),
		get(Stablecoins, StablecoinsCategoryOutflow, "Category total outflow", scCategoryParams(),
			Arr(categoryAmount())),
		get(Stablecoins, StablecoinsCategoryNetflow, "Category total netflow", scCategoryParams(),
			Arr(categoryAmount())),
	}
}

// scChains are the supported chains.
func scChains() []string {
	return []string{"ethereum-1", "arbitrum-42161", "polygon-137", "optimism-10", "base-8453",
		"binance-smart-chain-56", "avalanche-43114"}
}

// scChainID is the optional single-chain filter.
func scChainID() Param {
	return Param{Name: "chain_id", In: InQuery, Type: String, Enum: scChains(),
		Description: "chain; default: all chains"}
}

// scTokenSymbol is the optional token filter.
func scTokenSymbol() Param {
	return Param{Name: "token_symbol", In: InQuery, Type: String,
		Enum: []string{"FRAX", "USDY", "USD0", "TUSD", "USDe", "USDL", "DAI", "USDT", "USDC", "AUSD", "USDO",
			"lisUSD", "USDD", "USD1", "vBUSD", "XUSD", "DEUSD", "RLUSD", "USDP", "USDtb", "FRXUSD", "USDf", "USDG", "LINK"},
		Description: "token; default: all tokens"}
}

// scTimeRange is the window ending now.
func scTimeRange() Param {
	return Param{Name: "time_range", In: InQuery, Type: String, Default: "1h",
		Enum: []string{"10m", "30m", "1h", "3h", "6h", "24h"}, Description: "window ending now"}
}

// scTimeAgg is the bucket size of the over-time endpoints.
func scTimeAgg() Param {
	return Param{Name: "time_agg", In: InQuery, Type: String, Default: "5m",
		Enum: []string{"1m", "2m", "5m", "10m", "30m", "1h"}, Description: "bucket size"}
}

// scChainIDs is the multi-value chain filter of the bridge endpoints.
func scChainIDs() Param {
	return Param{Name: "chain_ids", In: InQuery, Type: String, Multi: true, Enum: scChains(),
		Description: "chains; default: all chains"}
}

// scCategory is the multi-value category filter of the category endpoints.
func scCategory() Param {
	return Param{Name: "category", In: InQuery, Type: String, Multi: true,
		Enum:        []string{"dex", "cex", "bridge", "lending", "mint_burn", "other"},
		Description: "counterparty categories; default: all categories"}
}

// scBridgeParams are the parameters of the bridge total and cross-chain endpoints.
func scBridgeParams() []Param {
	return []Param{scChainID(), scTokenSymbol(), scTimeRange(), scChainIDs()}
}

// scCategoryParams are the parameters of the category endpoints.
func scCategoryParams() []Param {
	return []Param{scChainID(), scTokenSymbol(), scTimeRange(), scCategory()}
}

// chainAmount is a USD amount per chain.
func chainAmount() *Schema { return Obj(P("chain_id", Str()), P("total_amount", Num())) }

// categoryAmount is a USD amount per counterparty category.
func categoryAmount() *Schema { return Obj(P("category", Str()), P("total_amount", Num())) }
