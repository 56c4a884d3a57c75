package route

// Dex lens reports group ({dex_url}): 9 operations.

// dexLensOps lists the dex lens operations in the order of the interface.
func dexLensOps() []Operation {
	return []Operation{
		get(DexLens, DexLensPoolListings, "Pool listings", nil,
			Desc(Arr(Obj(
				P("query_key", Desc(Num(), "pool id to pass as pool")),
				P("name", Str()),
				P("type", Str()),
				P("daily_volume", Desc(Num(), "USD over 24 h")),
			)), "ordered by daily_volume, descending")),
		get(DexLens, DexLensActiveWhales, "Active whales",
			[]Param{
				limitParam("100", 1000),
				{Name: "order", In: InQuery, Type: String, Default: "active_volume_last_7_days",
					Enum: []string{"active_volume_last_7_days", "trading_volume_last_7_days", "lp_volume_last_7_days",
						"delegations_volume_last_7_days"},
					Description: "ranking volume"},
			},
			Arr(obj(
				one(P("wallet", Str())),
				each(Num, "trading_volume_last_7_days", "lp_volume_last_7_days", "staking_volume_last_7_days",
					"total_volume_last_7_days"),
			))),
		get(DexLens, DexLensCumulativeVolume, "Cumulative trading volume KPI", dateRange(), Arr(kpiRow())),
		get(DexLens, DexLensCumulativeProtocolR, "Cumulative protocol revenue KPI", nil, Arr(kpiRow())),
		get(DexLens, DexLensCumulativeSupplySideR, "Cumulative supply-side revenue KPI", dateRange(),
			Arr(kpiRow())),
		get(DexLens, DexLensLiquidityFlow, "Liquidity flow",
			concat(dateRange(), []Param{
				{Name: "pool", In: InQuery, Type: String, Multi: true, Default: "total",
					Description: "pool ids (query_key of /aux/pool_listings) or total"},
			}),
			Desc(Arr(Series()), "daily net liquidity flow in USD per requested pool")),
		get(DexLens, DexLensAssetsInChain, "Assets in chain", dateRange(),
			Arr(Obj(P("labels", Str()), P("assets_in_chain_usdc", Num())))),
		get(DexLens, DexLensTopAssetsDateRange, "Top assets by volume in a date range",
			concat(dateRange(), []Param{limitParam("20", 1000)}),
			Desc(Arr(topAsset()), "descending by usd_volume")),
		get(DexLens, DexLensTopAssetsLastPeriod,
			"Top assets by volume over the last period of hours",
			[]Param{
				{Name: "period", In: InQuery, Type: Integer, Default: "24", Min: F(1), Max: F(720),
					Description: "hours"},
				limitParam("20", 1000),
			},
			Desc(Arr(topAsset()), "descending by usd_volume")),
	}
}

// kpiRow is a daily cumulative KPI value.
func kpiRow() *Schema { return Obj(P("labels", Str()), P("value", Num())) }

// topAsset is the top asset by volume record.
func topAsset() *Schema {
	return Obj(
		P("denom", Str()),
		P("usd_volume", Desc(Num(), "USD swap volume")),
		P("name", Str()),
		P("symbol", Str()),
		P("url", Desc(Str(), "logo image URL")),
	)
}
