package route

import (
	"reflect"
	"slices"
	"testing"
)

// Spot checks of exact values in the table.

// qp is a query parameter for the expectations below.
func qp(name string, typ ParamType) Param { return Param{Name: name, In: InQuery, Type: typ} }

func TestParamSpotChecks(t *testing.T) {
	with := func(p Param, f func(*Param)) Param { f(&p); return p }
	tests := []struct {
		id   string
		want Param // Description is not compared
	}{
		{"GET /perp/crm", with(qp("limit", Integer), func(p *Param) { p.Default = "10"; p.Min, p.Max = Range(1, 50) })},
		{"GET /perp/crm", with(qp("offset", Integer), func(p *Param) { p.Default = "0"; p.Min = F(0) })},
		{"GET /perp/crm", with(qp("sort_order", String), func(p *Param) {
			p.Default = "DESC"
			p.Enum = []string{"ASC", "DESC", "asc", "desc"}
		})},
		{"GET /perp/crm", with(qp("sort_by", String), func(p *Param) {
			p.Default = "all_time_volume_usdc"
			p.Enum = []string{"user", "all_time_trades", "all_time_volume_usdc", "all_time_fees_usdc",
				"all_time_avg_trade_size", "last_30d_trades", "last_30d_volume_usdc", "last_30d_fees_usdc",
				"last_30d_avg_trade_size", "first_activity_timestamp", "last_activity_timestamp", "all_time_tx_count",
				"labels", "tier"}
		})},
		{"GET /perp/crm", qp("max_all_time_tx_count", Number)},
		{"GET /perp/crm", qp("first_activity_before", Date)},
		{"GET /stream/pool/v1/all", with(qp("order_key", String), func(p *Param) {
			p.Default = "liquidity"
			p.Enum = []string{"volume_24h", "liquidity", "volume_24h_change", "liquidity_change"}
		})},
		{"GET /stream/pool/v1/all", with(qp("limit", Integer), func(p *Param) { p.Default = "100"; p.Min, p.Max = Range(1, 1000) })},
		{"GET /stream/pool/v1/all", with(qp("pool_ids", String), func(p *Param) { p.Multi = true })},
		{"GET /pools/depth/{pool_id}/over_time", with(qp("percent", String), func(p *Param) {
			p.Required = true
			p.Enum = []string{"10", "5", "2", "1", "0.1"}
		})},
		{"GET /pools/depth/{pool_id}/over_time", with(qp("start_date", Date), func(p *Param) { p.Required = true })},
		{"GET /pools/depth/{pool_id}/current", with(qp("percent", Number), func(p *Param) { p.Default = "2"; p.Max = F(50) })},
		{"GET /pools/depth/{pool_id}/current", Param{Name: "pool_id", In: InPath, Type: String, Required: true}},
		{"GET /campaign/multiple-cointype", with(qp("addresses", String), func(p *Param) {
			p.Required, p.Multi, p.MaxItems = true, true, 20
		})},
		{"GET /click", with(qp("campaign_id", String), func(p *Param) { p.Required = true })},
		{"GET /tokens/v2/historical/{asset}/chart", with(qp("tf", Integer), func(p *Param) {
			p.Default = "60"
			p.Enum = []string{"1", "5", "10", "15", "30", "60", "120", "240", "480", "720", "1440", "10080", "43800"}
		})},
		{"GET /tokens/v2/historical/{asset}/chart", with(qp("realtime", Boolean), func(p *Param) { p.Default = "false" })},
		{"GET /pairs/v1/historical/{pool_id}/chart", with(qp("range", String), func(p *Param) {
			p.Default = "7d"
			p.Enum = []string{"1h", "1d", "7d", "1mo", "1y", "all"}
		})},
		{"GET /trading/volume/top_assets_date_range", qp("start_date", Date)},
		{"GET /trading/volume/top_assets_date_range", with(qp("limit", Integer), func(p *Param) { p.Default = "20"; p.Min, p.Max = Range(1, 1000) })},
		{"GET /trading/volume/top_assets_last_period_hours", with(qp("period", Integer), func(p *Param) { p.Default = "24"; p.Min, p.Max = Range(1, 720) })},
		{"GET /activity/user_distribution_by_activity", with(qp("time_resolution", String), func(p *Param) {
			p.Default = "hour"
			p.Enum = []string{"hour", "day", "week"}
		})},
		{"GET /activity/user_distribution_by_trades", with(qp("time_resolution", String), func(p *Param) {
			p.Default = "hour"
			p.Enum = []string{"hour", "day", "week", "month"}
		})},
		{"GET /trading/funding_rate", with(qp("market", String), func(p *Param) { p.Default = "0" })},
		{"GET /trading/funding_rate", with(qp("granularity", String), func(p *Param) {
			p.Default = "day"
			p.Enum = []string{"hour", "day", "week", "month"}
		})},
		{"GET /total_rewards", with(qp("unit", String), func(p *Param) {
			p.Default = "native"
			p.Enum = []string{"token", "dollar", "native"}
		})},
		{"GET /tokenomics/wallets/module_accounts", with(qp("unit", String), func(p *Param) {
			p.Default = "native"
			p.Enum = []string{"native", "dollar"}
		})},
		{"GET /business/expenses_share_by_destination", with(qp("destinations", String), func(p *Param) {
			p.Multi, p.Default = true, "total"
			p.Enum = []string{"trading_rewards", "grants", "validators", "other", "total"}
		})},
		{"GET /stablecoins/issuing/over-time", with(qp("time_agg", String), func(p *Param) {
			p.Default = "5m"
			p.Enum = []string{"1m", "2m", "5m", "10m", "30m", "1h"}
		})},
		{"GET /stablecoins/bridge/total-inflow", with(qp("chain_ids", String), func(p *Param) {
			p.Multi = true
			p.Enum = []string{"ethereum-1", "arbitrum-42161", "polygon-137", "optimism-10", "base-8453",
				"binance-smart-chain-56", "avalanche-43114"}
		})},
		{"GET /stablecoins/whale-alerts", with(qp("limit", Integer), func(p *Param) { p.Default = "5"; p.Min, p.Max = Range(1, 1000) })},
		{"GET /dex/trades/{denom0}/{denom1}", with(qp("limit", Integer), func(p *Param) { p.Default = "50"; p.Min, p.Max = Range(1, 1000) })},
		{"GET /dex/price/{denom0}/{denom1}", with(qp("limit", Integer), func(p *Param) { p.Min, p.Max = Range(1, 10000) })},
		{"GET /staking/liquid/flow_by_provider", with(qp("provider", String), func(p *Param) {
			p.Default = "total"
			p.Enum = []string{"stride", "pstake", "quicksilver", "drop", "total"}
		})},
		{"GET /v3/address/{address}/permissions", with(qp("role", String), func(p *Param) {
			p.Required = true
			p.Enum = []string{"granter", "grantee"}
		})},
	}
	for _, tt := range tests {
		got := opByID(t, tt.id).Param(tt.want.Name)
		if got == nil {
			t.Errorf("%s: no param %q", tt.id, tt.want.Name)
			continue
		}
		g := *got
		g.Description = ""
		if !reflect.DeepEqual(g, tt.want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tt.id, tt.want.Name, g, tt.want)
		}
	}
}

func TestParamCounts(t *testing.T) {
	tests := []struct {
		id   string
		want int
	}{
		{"GET /perp/crm", 27},
		{"GET /click", 5},
		{"GET /kpi/cumulative_protocol_revenue", 0},
		{"GET /fees/v1/pools", 0},
		{"GET /stablecoins/bridge/netflow-over-time", 5},
		{"GET /dex/price/{denom0}/{denom1}", 8},
	}
	for _, tt := range tests {
		if got := len(opByID(t, tt.id).Params); got != tt.want {
			t.Errorf("%s: %d params, want %d", tt.id, got, tt.want)
		}
	}
}

// memberNames lists the member names of an object schema.
func memberNames(s *Schema) []string {
	var names []string
	for _, p := range s.Properties {
		names = append(names, p.Name)
	}
	return names
}

func TestResponseSpotChecks(t *testing.T) {
	tests := []struct {
		id    string
		get   func(*Schema) *Schema
		names []string
	}{
		{"POST /track", func(s *Schema) *Schema { return s }, []string{"ok", "id", "warnings"}},
		{"POST /sdk/track", func(s *Schema) *Schema { return s }, []string{"ok", "id", "warnings"}},
		{"GET /campaign/{address}", func(s *Schema) *Schema { return s.Items }, []string{"campaign_id", "campaign_owner",
			"campaign_name", "campaign_topic", "audience_id", "audience_name", "address", "creatives", "start_date", "end_date"}},
		{"GET /stream/pool/v1/all", func(s *Schema) *Schema { return s }, []string{"pagination", "pools"}},
		{"GET /trading_metrics", func(s *Schema) *Schema { return s }, []string{"assets_in_chain",
			"traders_last_30_days", "cumulative_volume", "volume_24h"}},
		{"GET /dex/pairs", func(s *Schema) *Schema { return s }, []string{"data", "meta", "height"}},
		{"GET /dex/price/{denom0}/{denom1}", func(s *Schema) *Schema { return s }, []string{"data", "meta", "height", "time"}},
		{"GET /apr_split", func(s *Schema) *Schema { return s.Items }, []string{"labels", "1d_trailing_avg",
			"7d_trailing_avg", "30d_trailing_avg"}},
		{"GET /liquidity/liquidity_flow", func(s *Schema) *Schema { return s.Items }, []string{"labels"}},
		{"GET /stablecoins/bridge/netflow-over-time", func(s *Schema) *Schema { return s.Items }, []string{"labels", "total"}},
		{"GET /trading/trading_share_by_pool", func(s *Schema) *Schema { return s.Items }, []string{"labels", "others", "total"}},
	}
	for _, tt := range tests {
		s := tt.get(opByID(t, tt.id).Response)
		if got := memberNames(s); !slices.Equal(got, tt.names) {
			t.Errorf("%s: members %v, want %v", tt.id, got, tt.names)
		}
	}

	// Lens series rows carry free numeric columns.
	for _, id := range []string{"GET /liquidity/liquidity_flow", "GET /staking/share_by_validator",
		"GET /aez/revenue_share_by_consumer", "GET /stablecoins/bridge/netflow-over-time"} {
		if ap := opByID(t, id).Response.Items.AdditionalProperties; ap == nil || ap.Type != "number" {
			t.Errorf("%s: series row without numeric columns", id)
		}
	}

	// Nullability and optionality of a few members.
	member := func(s *Schema, name string) Property {
		for _, p := range s.Properties {
			if p.Name == name {
				return p
			}
		}
		t.Fatalf("no member %q", name)
		return Property{}
	}
	crm := opByID(t, "GET /perp/crm").Response.Items
	if p := member(crm, "all_time_trades"); !p.Schema.Nullable || p.Optional {
		t.Errorf("/perp/crm all_time_trades: nullable %v optional %v", p.Schema.Nullable, p.Optional)
	}
	if p := member(crm, "tier"); !p.Schema.Nullable || !p.Optional {
		t.Errorf("/perp/crm tier: nullable %v optional %v", p.Schema.Nullable, p.Optional)
	}
	if p := member(crm, "all_time_top_3_markets"); p.Schema.Type != "array" || p.Schema.Items.Type != "string" {
		t.Errorf("/perp/crm all_time_top_3_markets: %+v", p.Schema)
	}
	tok := opByID(t, "GET /tokens/v2/{asset}").Response.Items
	if p := member(tok, "main"); p.Schema.Type != "boolean" {
		t.Errorf("/tokens/v2/{asset} main: type %q", p.Schema.Type)
	}
	if p := member(tok, "market_data_mcap"); !p.Schema.Nullable {
		t.Errorf("/tokens/v2/{asset} market_data_mcap not nullable")
	}
	depth := opByID(t, "GET /pools/depth/{pool_id}/over_time").Response.Items
	if p := member(member(depth, "base_sell_depth").Schema, "token_amount"); p.Schema.Type != "number" {
		t.Errorf("depth over time token_amount: type %q", p.Schema.Type)
	}
	cur := opByID(t, "GET /pools/depth/{pool_id}/current").Response
	if p := member(member(cur, "base_sell_depth").Schema, "token_amount"); p.Schema.Type != "string" {
		t.Errorf("depth current token_amount: type %q", p.Schema.Type)
	}
	attrs := member(opByID(t, "POST /track").Body, "attributes").Schema
	if got := memberNames(attrs); !slices.Equal(got, []string{"tokens", "amount_usd"}) || attrs.AdditionalProperties == nil {
		t.Errorf("POST /track attributes: members %v, free keys %v", got, attrs.AdditionalProperties != nil)
	}
	if got := memberNames(member(attrs, "tokens").Schema.Items); !slices.Equal(got, []string{"amount", "denom"}) {
		t.Errorf("POST /track attributes.tokens[]: members %v", got)
	}
	sdk := opByID(t, "POST /sdk/track").Body
	if got := memberNames(sdk); !slices.Equal(got, []string{"name", "attributes", "meta", "timestamp", "anonymousId", "userId"}) {
		t.Errorf("POST /sdk/track body: members %v", got)
	}
	next := member(member(opByID(t, "GET /stream/pool/v1/all").Response, "pagination").Schema, "next_offset")
	if !next.Schema.Nullable {
		t.Errorf("next_offset not nullable")
	}
}
