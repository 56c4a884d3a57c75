package route

// Dex analytics group ({dex_url}): 31 operations.

// dexOps lists the dex analytics operations in the order of the interface.
func dexOps() []Operation {
	return []Operation{
		get(Dex, DexPoolsAPRRangeV2, "Pools APR range (v2)", poolFilter(), Arr(poolAPRRange())),
		get(Dex, DexCLAPRv2, "Concentrated-liquidity pool position APR (v2)",
			[]Param{
				pathParam("pool", "concentrated-liquidity pool id"),
				required("lower_tick", Integer, "lower tick index"),
				required("upper_tick", Integer, "upper tick index, above lower_tick"),
			},
			positionAPR()),
		withCredits(get(Dex, DexPairChart, "Token pair historical chart",
			[]Param{
				pathParam("pool_id", "pool id, digits only"),
				required("asset_in", String, "denom (or symbol when asset_type=symbol)"),
				required("asset_out", String, "denom (or symbol when asset_type=symbol)"),
				{Name: "range", In: InQuery, Type: String, Default: "7d",
					Enum: []string{"1h", "1d", "7d", "1mo", "1y", "all"}, Description: "chart range"},
				{Name: "asset_type", In: InQuery, Type: String, Default: "denom",
					Enum: []string{"denom", "symbol"}, Description: "how asset_in and asset_out are given"},
			},
			Arr(Desc(obj(each(Num, "time", "open", "close", "high", "low")),
				"time: bar start, Unix seconds; prices: asset_out per one asset_in"))), 25),
		withCredits(get(Dex, DexTokenChart, "Token historical chart",
			[]Param{
				pathParam("asset", "denom or symbol"),
				{Name: "tf", In: InQuery, Type: Integer, Default: "60",
					Enum:        []string{"1", "5", "10", "15", "30", "60", "120", "240", "480", "720", "1440", "10080", "43800"},
					Description: "minutes per bar"},
				{Name: "realtime", In: InQuery, Type: Boolean, Default: "false",
					Description: "also return the current, still-open bar"},
			},
			Arr(Desc(obj(each(Num, "time", "open", "close", "high", "low", "volume")),
				"time: bar start, Unix seconds; prices and volume in USD"))), 25),
		get(Dex, DexRealTimePrice, "Token real-time price",
			[]Param{pathParam("asset", "denom or symbol")},
			Obj(P("denom", Str()), P("usd_price", Num()))),
		get(Dex, DexToken, "Token data",
			[]Param{pathParam("asset", "symbol, denom, or all")},
			Arr(token())),
		get(Dex, DexPoolFees, "Pools fees", nil,
			Obj(
				P("last_update_at", Desc(Num(), "Unix seconds")),
				P("data", Arr(obj(
					one(P("pool_id", Str())),
					each(Num, "volume_24h", "volume_7d", "fees_spent_24h", "fees_spent_7d"),
					one(P("fees_percentage", Desc(Str(), `swap fee rate, e.g. "0.2%"`))),
				))),
			)),
		get(Dex, DexPoolStream, "Pool stream data",
			[]Param{
				{Name: "min_liquidity", In: InQuery, Type: Number, Default: "1", Description: "minimum liquidity in USD"},
				{Name: "order_key", In: InQuery, Type: String, Default: "liquidity",
					Enum:        []string{"volume_24h", "liquidity", "volume_24h_change", "liquidity_change"},
					Description: "field to order by"},
				{Name: "order_by", In: InQuery, Type: String, Default: "desc", Enum: []string{"desc", "asc"},
					Description: "order direction"},
				limitParam("100", 1000),
				offsetParam(),
				{Name: "pool_ids", In: InQuery, Type: String, Multi: true,
					Description: "pool ids; when present, limit is ignored"},
			},
			Obj(
				P("pagination", Obj(
					P("next_offset", Desc(nNum(), "null on the last page")),
					P("total_pools", Num()),
				)),
				P("pools", Arr(streamPool())),
			)),
		get(Dex, DexLPEstimation, "Rewards estimation for a bech32 address",
			[]Param{addressPath("bech32Address", "osmo1... address")},
			obj(
				one(P("pools", Desc(Map(obj(each(Num, "day_usd", "month_usd", "year_usd"))), "keyed by pool id"))),
				each(Num, "total_day_usd", "total_month_usd", "total_year_usd"),
			)),
		get(Dex, DexRewardsByDay, "Rewards estimation for an address and a denomination",
			[]Param{
				addressPath("address", "wallet address"),
				{Name: "denom", In: InPath, Type: Denom, Required: true, Description: "reward denom, percent-encoded when it contains /"},
			},
			Arr(Desc(obj(each(Str, "timestamp", "cl_amount", "gamm_amount", "staking_amount")),
				"one row per UTC day; amounts in base units"))),
		get(Dex, DexRewardDenoms, "Rewards estimation for an address",
			[]Param{addressPath("address", "wallet address")},
			Obj(P("denoms", Arr(Str())))),
		get(Dex, DexPosition, "Position info",
			[]Param{pathParam("positionId", "position id, digits")},
			Obj(
				P("total_spread_rewards", Arr(coin())),
				P("total_incentives_rewards", Arr(coin())),
				P("total_forfeit_rewards", Arr(coin())),
				P("principal", Obj(
					P("action", strEnum("create_position", "add_to_position")),
					P("address", Str()),
					P("tx_hash", Str()),
					P("block", Num()),
					P("tx_time", Desc(Str(), "YYYY-MM-DD HH:MM:SS")),
					P("value", Desc(Num(), "USD")),
					P("position", obj(each(Num, "position_id", "pool_id", "lower_tick", "upper_tick"))),
					P("assets", Arr(Obj(P("denom", Str()), P("amount", Str()), P("value", Num())))),
				)),
			)),
		get(Dex, DexIBCStatus, "IBC chain status",
			[]Param{
				pathParam("source", "chain name as in the chain registry"),
				pathParam("destination", "chain name as in the chain registry"),
			},
			Arr(obj(
				each(Str, "source", "destination", "channel_id"),
				each(Num, "size_queue", "duration_minutes"),
			))),
		get(Dex, DexPoolLiquidity, "Pool liquidity over time",
			[]Param{pathParam("pool_id", "pool id")},
			Arr(Obj(P("timestamp", Str()), P("liquidity_usd", Num())))),
		get(Dex, DexDepthCurrent, "Pool depth now",
			[]Param{
				pathParam("pool_id", "pool id"),
				{Name: "percent", In: InQuery, Type: Number, Default: "2", Max: F(50),
					Description: "price movement in percent on both sides; > 0 and ≤ 50"},
			},
			Obj(P("base_sell_depth", depth(Str)), P("quote_sell_depth", depth(Str)))),
		get(Dex, DexDepthOverTime, "Pool depth over time",
			[]Param{
				pathParam("pool_id", "pool id"),
				{Name: "percent", In: InQuery, Type: String, Required: true,
					Enum: []string{"10", "5", "2", "1", "0.1"}, Description: "price movement in percent"},
				required("start_date", Date, "range start"),
				query("end_date", Date, "default: now"),
			},
			Arr(Desc(Obj(
				P("hour", Str()),
				P("base_sell_depth", depth(Num)),
				P("quote_sell_depth", depth(Num)),
			), "hourly"))),
		get(Dex, DexStakingAPR, "Staking APR",
			concat(dateRange(), []Param{
				{Name: "trailing_period", In: InQuery, Type: String, Default: "1d",
					Enum: []string{"1d", "7d", "30d"}, Description: "averaging period"},
			}),
			Desc(Arr(Obj(P("labels", Str()), P("symbol", Str()), P("apr", Num()))), "one row per day, newest first")),
		get(Dex, DexPoolsAPR, "Pools APR", poolFilter(),
			Arr(obj(one(P("pool_id", Str())), each(Num, "swap_fees"), each(nNum, "superfluid", "native", "boost", "total_apr")))),
		get(Dex, DexPoolsAPRRange, "Pools APR range", poolFilter(), Arr(poolAPRRange())),
		get(Dex, DexCLAPRv1, "Concentrated-liquidity pool position APR",
			[]Param{
				pathParam("pool", "concentrated-liquidity pool id"),
				query("lower_tick", Integer, "lower tick index; default: full range"),
				query("upper_tick", Integer, "upper tick index; default: full range"),
			},
			positionAPR()),
		get(Dex, DexSupply, "Supply metrics",
			[]Param{
				{Name: "metric", In: InQuery, Type: String,
					Enum:        []string{"totalSupply", "circulatingSupply", "burntSupply"},
					Description: "return only this metric; default: all"},
			},
			Obj(
				P("lastUpdate", dateTime()),
				Opt("totalSupply", Num()),
				Opt("burntSupply", Num()),
				Opt("circulatingSupply", Num()),
			)),
		get(Dex, DexPortfolioOverTime, "Portfolio over time",
			[]Param{
				required("address", Bech32, "osmo1... address"),
				{Name: "range", In: InQuery, Type: String, Required: true,
					Enum: []string{"1d", "7d", "1mo", "1y", "all"}, Description: "chart range"},
			},
			Arr(Obj(P("timestamp", Str()), P("usd", Num())))),
		get(Dex, DexPortfolioCurrent, "Current portfolio",
			[]Param{required("address", Bech32, "osmo1... address")},
			Obj(P("usd", Num()))),
		get(Dex, DexClosedLimitOrders, "Closed limit orders history",
			[]Param{required("address", Bech32, "osmo1... address")},
			Desc(Arr(obj(
				each(Str, "place_timestamp", "place_tx_hash", "order_denom", "output_denom", "quantity",
					"claimed_quantity", "tick_id", "order_id"),
				one(
					P("order_direction", strEnum("ask", "bid")),
					P("price", Str()),
					P("status", strEnum("fullyClaimed", "cancelled")),
					P("contract", Str()),
				),
			)), "newest first")),
		get(Dex, DexPairsSummary, "Pairs summary (v2)",
			[]Param{limitParam("100", 1000), offsetParam()},
			Obj(
				P("last_update_at", Desc(Num(), "Unix seconds")),
				P("data", Arr(obj(
					each(Str, "pool_address", "pool_id", "base_name", "base_symbol", "base_address",
						"quote_name", "quote_symbol", "quote_address"),
					each(Num, "price", "base_volume_24h", "quote_volume_24h", "volume_24h", "volume_7d",
						"liquidity", "liquidity_atom"),
				))),
			)),
		get(Dex, DexChainRevenue, "Chain revenue", dateRange(),
			Arr(Obj(
				P("labels", Str()),
				P("source", strEnum("tx_fees", "taker_fees", "protorev")),
				P("amount", Desc(Num(), "USD")),
			))),
		get(Dex, DexTradingMetrics, "Trading metrics", nil,
			obj(each(func() *Schema { return obj(each(Num, "value", "growth_rate_seconds")) },
				"assets_in_chain", "traders_last_30_days", "cumulative_volume", "volume_24h"))),
		get(Dex, DexEarnStrategies, "Earn strategies", nil, Arr(earnStrategy())),
		get(Dex, DexEarnBalance, "Balance for an earn strategy",
			[]Param{pathParam("strategy", "strategy id"), addressPath("address", "osmo1... address")},
			Obj(
				P("strategy", Str()),
				P("balance", Obj(P("amount", Str()), P("usd", Num()))),
				Opt("token", Obj(P("name", Str()), P("symbol", Str()), P("decimals", Num()), P("total_supply", Str()))),
				P("unclaimed_rewards", Obj(P("total_usd", Num()))),
			)),
		get(Dex, DexEarnAPR, "APR of an earn strategy",
			[]Param{pathParam("strategy", "strategy id")},
			Obj(P("apr", Desc(Num(), "percent")))),
		get(Dex, DexEarnTVL, "TVL of an earn strategy",
			[]Param{pathParam("strategy", "strategy id")},
			strategyTVL()),
	}
}

// poolFilter is the optional pool filter of the pools APR endpoints.
func poolFilter() []Param { return []Param{query("pool", String, "pool id; default: all pools")} }

// The APR source fields of the pools APR endpoints: swap_fees is a number;
// superfluid is null when the superfluid yield of a superfluid asset cannot
// be computed (no share staked yet, or a concentrated-liquidity asset);
// native and boost of classic pools are null when lock gauges paid rewards
// that no event ties to a pool; total_apr is null when a source is.

// poolAPRRange is a row of the pools APR range endpoints.
func poolAPRRange() *Schema {
	return obj(
		one(P("pool_id", Str())),
		each(func() *Schema { return obj(each(Num, "lower", "upper")) }, "swap_fees"),
		each(func() *Schema { return obj(each(nNum, "lower", "upper")) }, "superfluid", "native", "boost", "total_apr"),
	)
}

// positionAPR is the answer of the concentrated-liquidity position APR endpoints.
func positionAPR() *Schema { return Obj(P("APR", Desc(Num(), "percent"))) }

// coin is a base-unit amount of a denom.
func coin() *Schema { return Obj(P("denom", Str()), P("amount", Str())) }

// depth is one side of a pool depth record; amount is Str for the current
// depth and Num for the depth over time.
func depth(amount func() *Schema) *Schema {
	return Obj(
		P("token_denom", Str()),
		P("token_amount", amount()),
		P("usd_amount", amount()),
		P("depth", Desc(Num(), "resulting price factor, e.g. 0.98")),
	)
}

// token is the token record of GET /tokens/v2/{asset}.
func token() *Schema {
	return obj(
		each(Str, "symbol", "denom", "name", "display"),
		one(
			P("main", Bool()),
			P("exponent", Num()),
			P("market_data_id", nStr()),
		),
		each(Num, "volume_24h", "volume_24h_change", "price", "price_1h_change", "price_24h_change",
			"price_7d_change", "liquidity", "liquidity_24h_change"),
		one(P("market_data_mcap", nNum())),
	)
}

// poolToken is a token of a pool in the pool stream.
func poolToken() *Schema {
	return obj(
		each(Str, "denom", "amount"),
		each(nStr, "name", "symbol", "display", "exponent", "market_data_id", "weight_or_scaling", "percent",
			"price", "price_24h_change"),
	)
}

// streamPool is a pool of the pool stream.
func streamPool() *Schema {
	// pool_tokens is an array of pool tokens, or for concentrated-liquidity
	// pools an object {asset0, asset1}: a schema without a type whose items
	// and properties each apply to the matching JSON type.
	poolTokens := &Schema{
		Description: "array of pool tokens; for concentrated-liquidity pools an object {asset0, asset1}",
		Items:       poolToken(),
		Properties:  []Property{P("asset0", poolToken()), P("asset1", poolToken())},
	}
	return obj(
		one(
			P("main", Bool()),
			P("type", strEnum("osmosis.gamm.v1beta1.Pool", "osmosis.gamm.poolmodels.stableswap.v1beta1.Pool",
				"osmosis.concentratedliquidity.v1beta1.Pool", "osmosis.cosmwasmpool.v1beta1.CosmWasmPool")),
			P("pool_id", Num()),
		),
		each(Num, "swap_fees", "exit_fees", "total_weight_or_scaling"),
		one(
			P("total_shares", Obj(P("denom", nStr()), P("amount", nStr()))),
			P("pool_tokens", poolTokens),
		),
		each(nNum, "liquidity", "liquidity_24h_change", "volume_24h", "volume_24h_change", "volume_7d"),
		one(P("address", Str())),
		each(nStr, "exponent_at_price_one", "spread_factor", "current_sqrt_price", "tick_spacing", "current_tick",
			"current_tick_liquidity", "code_id", "instantiate_msg"),
	)
}

// strategyTVL is the TVL object of an earn strategy.
func strategyTVL() *Schema {
	return Obj(
		P("tvlUsd", Str()),
		Opt("maxTvlUsd", Str()),
		P("assets", Arr(Obj(P("coinMinimalDenom", Str()), P("tvl", Str()), Opt("maxTvl", Str())))),
	)
}

// denomInfo is a denom with its name and symbol.
func denomInfo() *Schema { return obj(each(Str, "denom", "name", "symbol")) }

// earnStrategy is an item of GET /earn/strategies.
func earnStrategy() *Schema {
	return obj(
		one(
			P("id", Str()),
			P("type", strEnum("osmosis-staking", "liquid-osmosis-staking", "levana-pool-lp", "levana-pool-xlp",
				"umee-lending", "mars-lending", "ondo", "quasar-cl-vault")),
		),
		each(Str, "name", "provider", "category", "link"),
		one(
			P("tvl", strategyTVL()),
			P("apr", Desc(Num(), "percent")),
			P("tokenDenoms", Arr(denomInfo())),
			P("rewardDenoms", Arr(denomInfo())),
			Opt("lockDuration", Desc(Num(), "seconds")),
		),
	)
}
