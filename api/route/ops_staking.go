package route

// Multi-chain staking analytics group ({staking_url}): 3 operations.

// stakingOps lists the staking operations in the order of the interface.
func stakingOps() []Operation {
	return []Operation{
		get(Staking, StakingRevenueShareByConsumer, "Revenue share by consumer",
			concat(dateRange(), []Param{
				{Name: "consumers", In: InQuery, Type: String, Multi: true, Default: "total",
					Description: "consumer chain ids, or total"},
			}),
			Desc(Arr(NullableSeries()), "daily USD rewards from each requested consumer chain; null where a reward has no USD price")),
		get(Staking, StakingShareByProvider, "Liquid staking share by provider",
			concat(dateRange(), []Param{
				{Name: "providers", In: InQuery, Type: String, Multi: true, Default: "total",
					Enum: liquidProviders(), Description: "provider columns"},
			}),
			Desc(Arr(Series()), "ATOM liquid-staked through each requested provider at the day end")),
		get(Staking, StakingFlowByProvider, "Liquid staking flow by provider",
			concat(dateRange(), []Param{
				{Name: "provider", In: InQuery, Type: String, Default: "total",
					Enum: liquidProviders(), Description: "one provider, or total"},
			}),
			Desc(Arr(Obj(
				P("labels", Str()),
				P("total_inflow", Num()),
				P("total_outflow", Num()),
				P("top_inflow", Num()),
				P("top_inflow_tx_id", Desc(Str(), `"" when none`)),
				P("top_outflow", Num()),
				P("top_outflow_tx_id", Desc(Str(), `"" when none`)),
			)), "daily, ATOM")),
	}
}

// liquidProviders are the liquid-staking provider values.
func liquidProviders() []string { return []string{"stride", "pstake", "quicksilver", "drop", "total"} }
