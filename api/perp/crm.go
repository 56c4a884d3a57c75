package perp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// Trader is the perpetuals trader record of /perp/crm. Optional members
// the service does not know (labels, tier, balances, positions) are left
// out, as the record allows.
type Trader struct {
	User                string        `json:"user"`
	AllTimeTrades       *json.Number  `json:"all_time_trades"`
	AllTimeVolumeUSDC   *json.Number  `json:"all_time_volume_usdc"`
	AllTimeFeesUSDC     *json.Number  `json:"all_time_fees_usdc"`
	AllTimeAvgTradeSize *json.Number  `json:"all_time_avg_trade_size"`
	AllTimeTop3Markets  []string      `json:"all_time_top_3_markets"`
	AllTimeTop3Volumes  []json.Number `json:"all_time_top_3_volumes"`
	Last30dTrades       *json.Number  `json:"last_30d_trades"`
	Last30dVolumeUSDC   *json.Number  `json:"last_30d_volume_usdc"`
	Last30dFeesUSDC     *json.Number  `json:"last_30d_fees_usdc"`
	Last30dAvgTradeSize *json.Number  `json:"last_30d_avg_trade_size"`
	Last30dTop3Markets  []string      `json:"last_30d_top_3_markets"`
	Last30dTop3Volumes  []json.Number `json:"last_30d_top_3_volumes"`
	FirstActivity       *string       `json:"first_activity_timestamp"`
	LastActivity        *string       `json:"last_activity_timestamp"`
	AllTimeTxCount      *json.Number  `json:"all_time_tx_count"`
}

// crmColumns are the SQL expressions over perp_traders of the record's
// sortable and bounded fields. Average trade sizes are rounded to the
// USDC quantum (6 decimals); activity is the first (last) fill or signed
// tx. labels and tier are not known: sorting by them keeps the order by
// user.
var crmColumns = map[string]string{
	"user":                     "address",
	"all_time_trades":          "all_time_trades",
	"all_time_volume_usdc":     "all_time_volume_usdc",
	"all_time_fees_usdc":       "all_time_fees_usdc",
	"all_time_avg_trade_size":  "round(all_time_volume_usdc / nullif(all_time_trades, 0), 6)",
	"last_30d_trades":          "last_30d_trades",
	"last_30d_volume_usdc":     "last_30d_volume_usdc",
	"last_30d_fees_usdc":       "last_30d_fees_usdc",
	"last_30d_avg_trade_size":  "round(last_30d_volume_usdc / nullif(last_30d_trades, 0), 6)",
	"first_activity_timestamp": "least(first_fill_at, first_tx_at)",
	"last_activity_timestamp":  "greatest(last_fill_at, last_tx_at)",
	"all_time_tx_count":        "tx_count",
	"labels":                   "NULL::text",
	"tier":                     "NULL::int",
}

// crmBounded are the fields with min_/max_ bounds, in the interface's order.
var crmBounded = []string{"all_time_trades", "all_time_volume_usdc", "all_time_fees_usdc", "all_time_avg_trade_size",
	"last_30d_trades", "last_30d_volume_usdc", "last_30d_fees_usdc", "last_30d_avg_trade_size", "all_time_tx_count"}

// crm lists traders (addresses with at least one fill) from perp_traders,
// filtered, sorted (nulls last, then by user) and paginated.
func (s *Service) crm(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx, report.Traders)
	if err != nil {
		return nil, err
	}
	p := req.Params
	where := []string{"chain_id = ?", "all_time_trades > 0"}
	args := []any{s.chainID}
	if p.Has("address") { // an empty value is no value (api/params)
		where, args = append(where, "address = ?"), append(args, p.String("address"))
	}
	for _, f := range crmBounded {
		for _, b := range []struct{ prefix, op string }{{"min_", ">="}, {"max_", "<="}} {
			if name := b.prefix + f; p.Has(name) {
				where = append(where, fmt.Sprintf("%s %s ?::numeric", crmColumns[f], b.op))
				args = append(args, strconv.FormatFloat(p.Float(name), 'f', -1, 64))
			}
		}
	}
	for _, b := range []struct{ name, field, op string }{
		{"first_activity_after", "first_activity_timestamp", ">"},
		{"first_activity_before", "first_activity_timestamp", "<"},
		{"last_activity_after", "last_activity_timestamp", ">"},
		{"last_activity_before", "last_activity_timestamp", "<"},
	} {
		if t, ok := p.Time(b.name); ok {
			where = append(where, fmt.Sprintf("%s %s ?", crmColumns[b.field], b.op))
			args = append(args, t)
		}
	}
	sortBy, ok := crmColumns[p.String("sort_by")]
	if !ok {
		return nil, problem.BadParam("sort_by", "is not a sortable field")
	}
	dir := "DESC"
	if strings.EqualFold(p.String("sort_order"), "asc") {
		dir = "ASC"
	}
	query := fmt.Sprintf(`SELECT address, all_time_trades, all_time_volume_usdc::text AS all_time_volume,
			all_time_fees_usdc::text AS all_time_fees, %s::text AS all_time_avg,
			all_time_top_markets, all_time_top_volumes::text[] AS all_time_top_volumes,
			last_30d_trades, last_30d_volume_usdc::text AS last_30d_volume, last_30d_fees_usdc::text AS last_30d_fees,
			%s::text AS last_30d_avg, last_30d_top_markets, last_30d_top_volumes::text[] AS last_30d_top_volumes,
			%s AS first_activity, %s AS last_activity, tx_count
		FROM perp_traders WHERE %s
		ORDER BY %s %s NULLS LAST, address LIMIT ? OFFSET ?`,
		crmColumns["all_time_avg_trade_size"], crmColumns["last_30d_avg_trade_size"],
		crmColumns["first_activity_timestamp"], crmColumns["last_activity_timestamp"],
		strings.Join(where, " AND "), sortBy, dir)
	args = append(args, p.Int("limit"), p.Int("offset"))
	var rows []traderRow
	if err := api.Reader(ctx, s.db).NewRaw(query, args...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("perp traders: %w", err)
	}
	markets, err := s.markets(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Trader, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.record(markets))
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// traderRow is a perp_traders row as crm reads it.
type traderRow struct {
	Address        string     `bun:"address"`
	AllTimeTrades  int64      `bun:"all_time_trades"`
	AllTimeVolume  string     `bun:"all_time_volume"`
	AllTimeFees    string     `bun:"all_time_fees"`
	AllTimeAvg     *string    `bun:"all_time_avg"`
	AllTimeMarkets []int64    `bun:"all_time_top_markets,array"`
	AllTimeVolumes []string   `bun:"all_time_top_volumes,array"`
	Last30dTrades  int64      `bun:"last_30d_trades"`
	Last30dVolume  string     `bun:"last_30d_volume"`
	Last30dFees    string     `bun:"last_30d_fees"`
	Last30dAvg     *string    `bun:"last_30d_avg"`
	Last30dMarkets []int64    `bun:"last_30d_top_markets,array"`
	Last30dVolumes []string   `bun:"last_30d_top_volumes,array"`
	FirstActivity  *time.Time `bun:"first_activity"`
	LastActivity   *time.Time `bun:"last_activity"`
	TxCount        int64      `bun:"tx_count"`
}

func (r traderRow) record(markets map[int64]string) Trader {
	num := func(s string) *json.Number { n := api.Number(s); return &n }
	opt := func(s *string) *json.Number {
		if s == nil {
			return nil
		}
		return num(*s)
	}
	count := func(n int64) *json.Number { v := json.Number(strconv.FormatInt(n, 10)); return &v }
	ts := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := t.UTC().Format(time.DateTime)
		return &s
	}
	names := func(ids []int64) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = ticker(markets, id)
		}
		return out
	}
	vols := func(vs []string) []json.Number {
		out := make([]json.Number, len(vs))
		for i, v := range vs {
			out[i] = api.Number(v)
		}
		return out
	}
	return Trader{
		User: r.Address, AllTimeTrades: count(r.AllTimeTrades), AllTimeVolumeUSDC: num(r.AllTimeVolume),
		AllTimeFeesUSDC: num(r.AllTimeFees), AllTimeAvgTradeSize: opt(r.AllTimeAvg),
		AllTimeTop3Markets: names(r.AllTimeMarkets), AllTimeTop3Volumes: vols(r.AllTimeVolumes),
		Last30dTrades: count(r.Last30dTrades), Last30dVolumeUSDC: num(r.Last30dVolume), Last30dFeesUSDC: num(r.Last30dFees),
		Last30dAvgTradeSize: opt(r.Last30dAvg), Last30dTop3Markets: names(r.Last30dMarkets), Last30dTop3Volumes: vols(r.Last30dVolumes),
		FirstActivity: ts(r.FirstActivity), LastActivity: ts(r.LastActivity), AllTimeTxCount: count(r.TxCount),
	}
}
