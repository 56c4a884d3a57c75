package route

// Second dex chain analytics group ({dex2_url}): 6 operations.

// dex2Ops lists the second dex chain operations in the order of the interface.
func dex2Ops() []Operation {
	return []Operation{
		get(Dex2, Dex2Pairs, "Dex pairs", nil,
			Obj(
				P("data", Arr(obj(each(Str, "token_0", "token_1", "created_at_height", "updated_at_height",
					"created_at", "updated_at")))),
				P("meta", dexMeta()),
				P("height", Str()),
			)),
		get(Dex2, Dex2Liquidity, "Dex liquidity for a denomination pair", denomPair(),
			dexEnvelope(Obj(
				P("index", Desc(Str(), "tick index")),
				P("reserves_0", nStr()),
				P("reserves_1", nStr()),
			))),
		get(Dex2, Dex2Price, "Dex price for a denomination pair",
			concat(denomPair(), []Param{
				query("from", Integer, "Unix seconds; default: 24 h before to"),
				query("to", Integer, "Unix seconds; default: now"),
				dexPeriod("without it the last 24 h are summarised"),
				{Name: "periods", In: InQuery, Type: Integer, Default: "1", Min: F(1),
					Description: "bucket = periods × period"},
				{Name: "limit", In: InQuery, Type: Integer, Min: F(1), Max: F(10000), Description: "number of rows to return"},
				{Name: "show_trades_above_value", In: InQuery, Type: Number, Default: "1",
					Description: "ignore trades below this USD value"},
			}),
			dexEnvelope(Desc(obj(one(P("time", Str())), each(Num, "open", "high", "low", "close")),
				"OHLC as tick indexes"))),
		get(Dex2, Dex2Trades, "Dex trades for a denomination pair",
			concat(denomPair(), []Param{
				query("from", Integer, "Unix seconds"),
				query("to", Integer, "Unix seconds"),
				limitParam("50", 1000),
				{Name: "show_trades_above_amount", In: InQuery, Type: Number, Default: "100",
					Description: "minimum trade amount"},
			}),
			dexEnvelope(obj(
				each(Str, "time", "height"),
				opts(Str, "tx", "buy", "sell", "buy_at", "sell_at"),
			))),
		get(Dex2, Dex2SwapVolume, "Dex swap volume for a denomination pair",
			concat(denomPair(), []Param{
				query("from", Integer, "Unix seconds"),
				query("to", Integer, "Unix seconds"),
				dexPeriod("without it the rolling 24 h total"),
			}),
			dexEnvelope(Obj(P("time", Str()), P("volume", Str())))),
		get(Dex2, Dex2Volume, "Trading volume", dateRange(),
			Desc(Arr(Obj(P("day", Desc(Str(), "YYYY-MM-DD")), P("value", Desc(Num(), "USD")))),
				"USD dex volume per UTC day, oldest first")),
	}
}

// denomPair are the two denom path parameters.
func denomPair() []Param {
	return []Param{
		{Name: "denom0", In: InPath, Type: Denom, Required: true, Description: "chain denom, percent-encoded"},
		{Name: "denom1", In: InPath, Type: Denom, Required: true, Description: "chain denom, percent-encoded"},
	}
}

// dexPeriod is the bucket period of the dex price and swap-volume endpoints.
func dexPeriod(none string) Param {
	return Param{Name: "period", In: InQuery, Type: String,
		Enum: []string{"minute", "hour", "day", "week", "month"}, Description: "bucket period; " + none}
}

// dexMeta describes the columns of data.
func dexMeta() *Schema { return Arr(Obj(P("name", Str()), P("type", Str()), Opt("units", Str()))) }

// dexEnvelope is the envelope of the /dex endpoints with rows of the given schema.
func dexEnvelope(row *Schema) *Schema {
	return Obj(
		P("data", Arr(row)),
		P("meta", dexMeta()),
		P("height", Str()),
		P("time", dateTime()),
	)
}
