package perp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

const day = 24 * time.Hour

// window checks that the report tables are there (their freshness) and resolves
// the date range of req into the starts of the buckets of resolution res in
// it (see api.Buckets); a client's choice of hourly buckets (time_resolution
// or granularity) limits the range to 92 days.
func (s *Service) window(ctx context.Context, req *api.Request, res string, tables ...string) (api.Freshness, []time.Time, error) {
	return s.windowOf(ctx, req, res, res == api.Hour, tables...)
}

// windowOf is window, with the 92-day limit only when limitHours is set
// (an endpoint whose rows are hourly by design has no such limit).
func (s *Service) windowOf(ctx context.Context, req *api.Request, res string, limitHours bool, tables ...string) (api.Freshness, []time.Time, error) {
	fresh, err := s.begin(ctx, tables...)
	if err != nil {
		return api.Freshness{}, nil, err
	}
	r, err := req.Params.DateRange(req.Now, limitHours)
	if err != nil {
		return api.Freshness{}, nil, err
	}
	bs, err := api.Buckets(r.Start, r.End, fresh.Chains[0], res)
	return fresh, bs, err
}

// bucketSums sums an expression over perp_market_hourly per bucket of res
// (date_trunc in UTC: hour, day, ISO week, month) for the buckets bs (one
// market, or all when all is set); every bucket gets a value, 0 when it
// has no fills.
func (s *Service) bucketSums(ctx context.Context, expr string, bs []time.Time, res string, market int64, all bool) ([]string, error) {
	out := make([]string, len(bs))
	for i := range out {
		out[i] = "0"
	}
	if len(bs) == 0 {
		return out, nil
	}
	var rows []struct {
		Bucket time.Time `bun:"bucket"`
		Value  string    `bun:"value"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT date_trunc(?0, hour, 'UTC') AS bucket, (`+expr+`)::text AS value FROM perp_market_hourly
		WHERE chain_id = ?1 AND hour >= ?2 AND hour < ?3 AND (?4 OR perpetual_id = ?5)
		GROUP BY 1`, res, s.chainID, bs[0], api.NextBucket(bs[len(bs)-1], res), all, market).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("perp_market_hourly: %w", err)
	}
	sums := make(map[time.Time]string, len(rows))
	for _, r := range rows {
		sums[r.Bucket.UTC()] = r.Value
	}
	for i, b := range bs {
		if v, ok := sums[b]; ok {
			out[i] = v
		}
	}
	return out, nil
}

// tradesCount is the number of fills per bucket (granularity, default
// hour), all markets (perp_market_hourly.fills).
func (s *Service) tradesCount(ctx context.Context, req *api.Request) (*api.Response, error) {
	res := req.Params.String("granularity")
	fresh, bs, err := s.window(ctx, req, res, report.MarketHourly)
	if err != nil {
		return nil, err
	}
	sums, err := s.bucketSums(ctx, "sum(fills)", bs, res, 0, true)
	if err != nil {
		return nil, err
	}
	type row struct {
		Labels      string      `json:"labels"`
		TotalTrades json.Number `json:"total_trades"`
	}
	out := make([]row, len(bs))
	for i, b := range bs {
		out[i] = row{b.Format(time.DateTime), api.Number(sums[i])}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// tradingFees is the net trading fees (taker fees plus maker fees, maker
// rebates negative) per day, of one market or all.
func (s *Service) tradingFees(ctx context.Context, req *api.Request) (*api.Response, error) {
	name, value := "market", req.Params.String("market")
	if req.Params.Has("pool") {
		pool := req.Params.String("pool")
		if req.Params.Given("market") && pool != value {
			return nil, problem.BadParam("pool", "is an alias of market: giving both with different values is ambiguous")
		}
		name, value = "pool", pool
	}
	id, all, err := s.market(ctx, name, value)
	if err != nil {
		return nil, err
	}
	fresh, bs, err := s.window(ctx, req, "day", report.MarketHourly)
	if err != nil {
		return nil, err
	}
	sums, err := s.bucketSums(ctx, "sum(taker_fees_usdc + maker_fees_usdc)", bs, "day", id, all)
	if err != nil {
		return nil, err
	}
	type row struct {
		Labels    string      `json:"labels"`
		TotalFees json.Number `json:"total_fees"`
	}
	out := make([]row, len(bs))
	for i, b := range bs {
		out[i] = row{b.Format(time.DateTime), api.Number(sums[i])}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// Listing is one market of /aux/market_listings.
type Listing struct {
	Key         string      `json:"key"`
	QueryKey    int64       `json:"query_key"`
	Name        string      `json:"name"`
	DailyVolume json.Number `json:"daily_volume"`
}

// marketListings lists every market of the catalog (dydx_perpetuals), and
// any market with fills the catalog lacks (named by its id), with its USDC
// volume over the 24 hours up to the last aggregated block: the hour of
// that block and the 23 before it (perp_market_hourly), ordered by volume,
// then perpetual id.
func (s *Service) marketListings(ctx context.Context, _ *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx, report.MarketHourly)
	if err != nil {
		return nil, err
	}
	from := fresh.Chains[0].Time.Truncate(time.Hour).Add(-23 * time.Hour)
	var rows []struct {
		ID     int64  `bun:"perpetual_id"`
		Ticker string `bun:"ticker"`
		Volume string `bun:"volume"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT coalesce(p.perpetual_id, v.perpetual_id) AS perpetual_id,
			coalesce(p.ticker, coalesce(p.perpetual_id, v.perpetual_id)::text) AS ticker, coalesce(v.volume, 0)::text AS volume
		FROM (SELECT DISTINCT ON (perpetual_id) perpetual_id, ticker FROM dydx_perpetuals WHERE chain_id = ?0
			ORDER BY perpetual_id, height DESC) p
		FULL JOIN (SELECT perpetual_id, sum(volume_usdc) AS volume FROM perp_market_hourly
			WHERE chain_id = ?0 AND hour >= ?1 GROUP BY perpetual_id) v ON v.perpetual_id = p.perpetual_id
		ORDER BY coalesce(v.volume, 0) DESC, 1`, s.chainID, from).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("market listings: %w", err)
	}
	out := make([]Listing, len(rows))
	for i, r := range rows {
		out[i] = Listing{Key: r.Ticker, QueryKey: r.ID, Name: r.Ticker, DailyVolume: api.Number(r.Volume)}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// Ranked is one trader of /trading/traders_ranking.
type Ranked struct {
	Address          string      `json:"address"`
	TotalVolume      json.Number `json:"total_volume"`
	CumulativeVolume json.Number `json:"cumulative_volume"`
	Volume1d         json.Number `json:"volume_1d"`
	Volume7d         json.Number `json:"volume_7d"`
	Volume30d        json.Number `json:"volume_30d"`
}

// rankingSize is how many traders /trading/traders_ranking lists.
const rankingSize = 100

// tradersRanking ranks traders by all-time USDC volume of the chosen side
// (total, maker, taker; perp_traders); the 1, 7 and 30 day volumes cover
// the UTC days ending with the day of the last aggregated block
// (perp_trader_daily, the ranked traders' rows only); cumulative_volume is
// the running sum of total_volume by rank.
func (s *Service) tradersRanking(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx, report.TraderDaily, report.Traders)
	if err != nil {
		return nil, err
	}
	side := req.Params.String("volumeType")
	total := map[string]string{"total": "all_time_volume_usdc", "maker": "all_time_maker_volume_usdc",
		"taker": "all_time_taker_volume_usdc"}[side]
	daily := map[string]string{"total": "volume_usdc", "maker": "maker_volume_usdc", "taker": "taker_volume_usdc"}[side]
	if total == "" {
		return nil, problem.BadParam("volumeType", "must be one of total, maker, taker")
	}
	today := fresh.Chains[0].Time.Truncate(day)
	var rows []struct {
		Address    string `bun:"address"`
		Total      string `bun:"total_text"`
		Cumulative string `bun:"cumulative"`
		V1         string `bun:"v1_text"`
		V7         string `bun:"v7_text"`
		V30        string `bun:"v30_text"`
	}
	// all_time_trades > 0 and NULLS LAST (the volumes are never null) let
	// the ranking walk the side's partial index (perp_traders_*_volume_idx).
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT t.address, t.total::text AS total_text,
			(sum(t.total) OVER (ORDER BY t.total DESC, t.address))::text AS cumulative,
			v.v1::text AS v1_text, v.v7::text AS v7_text, v.v30::text AS v30_text
		FROM (
			SELECT address, `+total+` AS total FROM perp_traders
			WHERE chain_id = ?0 AND all_time_trades > 0 AND `+total+` > 0
			ORDER BY `+total+` DESC NULLS LAST, address LIMIT ?4
		) t CROSS JOIN LATERAL (
			SELECT coalesce(sum(`+daily+`) FILTER (WHERE day >= ?1), 0) AS v1,
				coalesce(sum(`+daily+`) FILTER (WHERE day >= ?2), 0) AS v7,
				coalesce(sum(`+daily+`), 0) AS v30
			FROM perp_trader_daily WHERE chain_id = ?0 AND address = t.address AND day >= ?3
		) v ORDER BY t.total DESC, t.address`,
		s.chainID, today, today.AddDate(0, 0, -6), today.AddDate(0, 0, -29), rankingSize).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("traders ranking: %w", err)
	}
	out := make([]Ranked, len(rows))
	for i, r := range rows {
		out[i] = Ranked{Address: r.Address, TotalVolume: api.Number(r.Total), CumulativeVolume: api.Number(r.Cumulative),
			Volume1d: api.Number(r.V1), Volume7d: api.Number(r.V7), Volume30d: api.Number(r.V30)}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// Revenue is one row of /perp/tokenomics/chain_revenue.
type Revenue struct {
	Labels string      `json:"labels"`
	Source string      `json:"source"`
	Amount json.Number `json:"amount"`
}

// revenueSources are the sources of /perp/tokenomics/chain_revenue, in
// the order of each day's rows.
var revenueSources = []string{"trading_fees", "tx_fees"}

// chainRevenue lists, for every day in the range up to the day of the last
// aggregated block, one row per source with its USDC amount
// (perp_revenue_daily; 0 for a day without revenue from the source).
func (s *Service) chainRevenue(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "day", report.RevenueDaily)
	if err != nil {
		return nil, err
	}
	out := make([]Revenue, 0, 2*len(bs))
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	var rows []struct {
		Day    time.Time `bun:"day"`
		Source string    `bun:"source"`
		Amount string    `bun:"amount"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, source, amount::text AS amount FROM perp_revenue_daily
		WHERE chain_id = ? AND day >= ? AND day <= ?`, s.chainID, bs[0], bs[len(bs)-1]).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("revenue: %w", err)
	}
	type key struct {
		day    time.Time
		source string
	}
	amounts := map[key]string{}
	for _, r := range rows {
		amounts[key{r.Day.UTC(), r.Source}] = r.Amount
	}
	for _, b := range bs {
		for _, src := range revenueSources {
			a, ok := amounts[key{b, src}]
			if !ok {
				a = "0"
			}
			out = append(out, Revenue{Labels: b.Format(time.DateTime), Source: src, Amount: api.Number(a)})
		}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
