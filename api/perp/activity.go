package perp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/api"
)

// transparencyFees is the net trading fees (taker plus maker fees, maker
// rebates negative) in USDC over the 24 hours up to the last aggregated
// block (its hour and the 23 before), the 30 UTC days ending with its day,
// and all time, from perp_market_hourly; mode=debug adds the taker and
// maker parts.
func (s *Service) transparencyFees(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx, report.MarketHourly)
	if err != nil {
		return nil, err
	}
	tip := fresh.Chains[0].Time
	var r struct {
		Taker24  string `bun:"taker24"`
		Maker24  string `bun:"maker24"`
		Taker30  string `bun:"taker30"`
		Maker30  string `bun:"maker30"`
		TakerAll string `bun:"taker_all"`
		MakerAll string `bun:"maker_all"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT
			coalesce(sum(taker_fees_usdc) FILTER (WHERE hour >= ?1), 0)::text AS taker24,
			coalesce(sum(maker_fees_usdc) FILTER (WHERE hour >= ?1), 0)::text AS maker24,
			coalesce(sum(taker_fees_usdc) FILTER (WHERE hour >= ?2), 0)::text AS taker30,
			coalesce(sum(maker_fees_usdc) FILTER (WHERE hour >= ?2), 0)::text AS maker30,
			coalesce(sum(taker_fees_usdc), 0)::text AS taker_all,
			coalesce(sum(maker_fees_usdc), 0)::text AS maker_all
		FROM perp_market_hourly WHERE chain_id = ?0`,
		s.chainID, tip.Truncate(time.Hour).Add(-23*time.Hour), tip.Truncate(day).AddDate(0, 0, -29)).Scan(ctx, &r); err != nil {
		return nil, fmt.Errorf("trading fees: %w", err)
	}
	sum := func(a, b string) (json.Number, error) {
		x, err := math.LegacyNewDecFromStr(a)
		if err != nil {
			return "", fmt.Errorf("fees %q: %w", a, err)
		}
		y, err := math.LegacyNewDecFromStr(b)
		if err != nil {
			return "", fmt.Errorf("fees %q: %w", b, err)
		}
		return api.Number(x.Add(y).String()), nil
	}
	out := map[string]any{}
	for _, f := range []struct{ name, taker, maker string }{
		{"24h", r.Taker24, r.Maker24}, {"30d", r.Taker30, r.Maker30}, {"total", r.TakerAll, r.MakerAll},
	} {
		net, err := sum(f.taker, f.maker)
		if err != nil {
			return nil, err
		}
		out["trading_fees_"+f.name] = net
	}
	if req.Params.String("mode") == "debug" {
		out["components"] = map[string]json.Number{
			"taker_fees_24h": api.Number(r.Taker24), "maker_fees_24h": api.Number(r.Maker24),
			"taker_fees_30d": api.Number(r.Taker30), "maker_fees_30d": api.Number(r.Maker30),
			"taker_fees_total": api.Number(r.TakerAll), "maker_fees_total": api.Number(r.MakerAll),
		}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// Overview is one day of /trading/trading_volume_overview.
type Overview struct {
	Labels        string      `json:"labels"`
	VolumeUSDC    json.Number `json:"volume_usdc"`
	TradesCount   json.Number `json:"trades_count"`
	UniqueTraders json.Number `json:"unique_traders"`
}

// volumeOverview is, per day, the USDC volume and fills of all markets
// (perp_market_hourly) and the distinct traders, taker or maker
// (perp_activity_buckets).
func (s *Service) volumeOverview(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "day", report.MarketHourly, report.ActivityBuckets)
	if err != nil {
		return nil, err
	}
	volume, err := s.bucketSums(ctx, "sum(volume_usdc)", bs, "day", 0, true)
	if err != nil {
		return nil, err
	}
	fills, err := s.bucketSums(ctx, "sum(fills)", bs, "day", 0, true)
	if err != nil {
		return nil, err
	}
	traders, err := s.distinctTraders(ctx, bs, "day")
	if err != nil {
		return nil, err
	}
	out := make([]Overview, len(bs))
	for i, b := range bs {
		out[i] = Overview{Labels: b.Format(time.DateTime), VolumeUSDC: api.Number(volume[i]), TradesCount: api.Number(fills[i]),
			UniqueTraders: json.Number(fmt.Sprint(traders[b]))}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// distinctTraders counts the traders with a fill in each bucket of res
// over the buckets bs (perp_activity_buckets).
func (s *Service) distinctTraders(ctx context.Context, bs []time.Time, res string) (map[time.Time]int64, error) {
	out := map[time.Time]int64{}
	if len(bs) == 0 {
		return out, nil
	}
	counts, err := s.bucketCounts(ctx, `SELECT bucket, traders AS a, 0 AS b, 0 AS c FROM perp_activity_buckets
		WHERE chain_id = ?1 AND resolution = ?0 AND bucket >= ?2 AND bucket < ?3`, bs, res)
	if err != nil {
		return nil, fmt.Errorf("traders per %s: %w", res, err)
	}
	for i, b := range bs {
		out[b] = counts[i][0]
	}
	return out, nil
}

// shareByPool is the daily USDC volume of the ten markets with the most
// volume over the range (columns named by ticker, largest first), of the
// other markets (others) and of all (total), from perp_market_hourly.
func (s *Service) shareByPool(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "day", report.MarketHourly)
	if err != nil {
		return nil, err
	}
	out := []api.SeriesRow{}
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	from, to := bs[0], api.NextBucket(bs[len(bs)-1], "day")
	var top []int64
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT perpetual_id FROM perp_market_hourly WHERE chain_id = ? AND hour >= ? AND hour < ?
		GROUP BY perpetual_id HAVING sum(volume_usdc) > 0 ORDER BY sum(volume_usdc) DESC, perpetual_id LIMIT 10`,
		s.chainID, from, to).Scan(ctx, &top); err != nil {
		return nil, fmt.Errorf("top markets: %w", err)
	}
	var rows []struct {
		Day    time.Time `bun:"day"`
		ID     int64     `bun:"perpetual_id"`
		Volume string    `bun:"volume"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT date_trunc('day', hour, 'UTC') AS day, perpetual_id, sum(volume_usdc)::text AS volume
		FROM perp_market_hourly WHERE chain_id = ? AND hour >= ? AND hour < ? GROUP BY 1, 2`,
		s.chainID, from, to).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("daily market volume: %w", err)
	}
	markets, err := s.markets(ctx)
	if err != nil {
		return nil, err
	}
	col := map[int64]int{}
	cols := make([]string, 0, len(top)+2)
	for i, id := range top {
		col[id] = i
		cols = append(cols, ticker(markets, id))
	}
	cols = append(cols, "others", "total")
	sums := map[time.Time][]math.LegacyDec{}
	for _, r := range rows {
		d := r.Day.UTC()
		if sums[d] == nil {
			sums[d] = make([]math.LegacyDec, len(cols))
			for i := range sums[d] {
				sums[d][i] = math.LegacyZeroDec()
			}
		}
		v, err := math.LegacyNewDecFromStr(r.Volume)
		if err != nil {
			return nil, fmt.Errorf("volume %q: %w", r.Volume, err)
		}
		i, ok := col[r.ID]
		if !ok {
			i = len(cols) - 2
		}
		sums[d][i] = sums[d][i].Add(v)
		sums[d][len(cols)-1] = sums[d][len(cols)-1].Add(v)
	}
	for _, b := range bs {
		row := api.SeriesRow{Labels: b.Format(time.DateTime), Columns: cols, Values: make([]json.Number, len(cols))}
		for i := range cols {
			row.Values[i] = "0"
			if v := sums[b]; v != nil {
				row.Values[i] = api.Number(v[i].String())
			}
		}
		out = append(out, row)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// ByTrades is one bucket of /activity/user_distribution_by_trades.
type ByTrades struct {
	Labels     string `json:"labels"`
	AtLeast100 int64  `json:"at_least_100"`
	AtLeast10  int64  `json:"at_least_10"`
	AtLeast1   int64  `json:"at_least_1"`
}

// distributionByTrades counts, per bucket, the traders with at least 100,
// 10 and 1 fills in it (perp_activity_buckets).
func (s *Service) distributionByTrades(ctx context.Context, req *api.Request) (*api.Response, error) {
	res := req.Params.String("time_resolution")
	fresh, bs, err := s.window(ctx, req, res, report.ActivityBuckets)
	if err != nil {
		return nil, err
	}
	counts, err := s.bucketCounts(ctx, `SELECT bucket, at_least_100 AS a, at_least_10 AS b, traders AS c FROM perp_activity_buckets
		WHERE chain_id = ?1 AND resolution = ?0 AND bucket >= ?2 AND bucket < ?3`, bs, res)
	if err != nil {
		return nil, fmt.Errorf("traders by fills: %w", err)
	}
	out := make([]ByTrades, len(bs))
	for i, b := range bs {
		out[i] = ByTrades{Labels: b.Format(time.DateTime), AtLeast100: counts[i][0], AtLeast10: counts[i][1], AtLeast1: counts[i][2]}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// bucketCounts runs query, which returns rows (bucket, a, b, c) given ?0 the
// resolution, ?1 the chain, ?2 the first bucket's start and ?3 the last
// one's end, and returns the three counts of each bucket of bs (zeros for a
// bucket without a row).
func (s *Service) bucketCounts(ctx context.Context, query string, bs []time.Time, res string) ([][3]int64, error) {
	out := make([][3]int64, len(bs))
	if len(bs) == 0 {
		return out, nil
	}
	var rows []struct {
		Bucket time.Time `bun:"bucket"`
		A      int64     `bun:"a"`
		B      int64     `bun:"b"`
		C      int64     `bun:"c"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(query, res, s.chainID, bs[0], api.NextBucket(bs[len(bs)-1], res)).Scan(ctx, &rows); err != nil {
		return nil, err
	}
	at := make(map[time.Time]int, len(bs))
	for i, b := range bs {
		at[b] = i
	}
	for _, r := range rows {
		if i, ok := at[r.Bucket.UTC()]; ok {
			out[i] = [3]int64{r.A, r.B, r.C}
		}
	}
	return out, nil
}

// ByActivity is one bucket of /activity/user_distribution_by_activity.
type ByActivity struct {
	Labels        string `json:"labels"`
	NewUsers      int64  `json:"new_users"`
	ActiveUsers   int64  `json:"active_users"`
	InactiveUsers int64  `json:"inactive_users"`
	TotalUsers    int64  `json:"total_users"`
}

// distributionByActivity splits, per bucket, the traders seen up to the
// bucket's end: new (first fill in the bucket), active (a fill in it, not
// new), inactive (fills before it, none in it); from perp_activity_buckets,
// where the traders who started before the first bucket are the new
// traders of the buckets before it.
func (s *Service) distributionByActivity(ctx context.Context, req *api.Request) (*api.Response, error) {
	res := req.Params.String("time_resolution")
	fresh, bs, err := s.window(ctx, req, res, report.ActivityBuckets)
	if err != nil {
		return nil, err
	}
	out := make([]ByActivity, len(bs))
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	counts, err := s.bucketCounts(ctx, `SELECT bucket, traders AS a, new_traders AS b, 0 AS c FROM perp_activity_buckets
		WHERE chain_id = ?1 AND resolution = ?0 AND bucket >= ?2 AND bucket < ?3`, bs, res)
	if err != nil {
		return nil, fmt.Errorf("traders per %s: %w", res, err)
	}
	var before int64
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT coalesce(sum(new_traders), 0) FROM perp_activity_buckets
		WHERE chain_id = ? AND resolution = ? AND bucket < ?`, s.chainID, res, bs[0]).Scan(ctx, &before); err != nil {
		return nil, fmt.Errorf("earlier traders: %w", err)
	}
	total := before
	for i, b := range bs {
		traded, started := counts[i][0], counts[i][1]
		total += started
		out[i] = ByActivity{Labels: b.Format(time.DateTime), NewUsers: started, ActiveUsers: traded - started,
			InactiveUsers: total - traded, TotalUsers: total}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// Cohort is one week of /activity/retention_rate.
type Cohort struct {
	Labels   string      `json:"labels"`
	NewUsers int64       `json:"new_users"`
	Week1    json.Number `json:"week1"`
	Week2    json.Number `json:"week2"`
	Week3    json.Number `json:"week3"`
	Week4    json.Number `json:"week4"`
}

// retention follows weekly cohorts (ISO weeks whose start is in the range):
// the traders whose first fill fell in the week, and the percent of them
// (2 decimals) with a fill in each of the four following weeks (0 for a
// week not reached yet); from perp_activity_buckets and
// perp_retention_weeks.
func (s *Service) retention(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "week", report.ActivityBuckets)
	if err != nil {
		return nil, err
	}
	out := make([]Cohort, len(bs))
	for i, b := range bs {
		out[i] = Cohort{Labels: b.Format(time.DateTime), Week1: "0", Week2: "0", Week3: "0", Week4: "0"}
	}
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	var rows []struct {
		Cohort time.Time `bun:"cohort"`
		New    int64     `bun:"new_users"`
		W      []int64   `bun:"weeks,array"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT a.bucket AS cohort, a.new_traders AS new_users, ARRAY(
			SELECT coalesce((SELECT r.traders FROM perp_retention_weeks r
				WHERE r.chain_id = a.chain_id AND r.cohort = a.bucket AND r.weeks_after = k), 0)
			FROM generate_series(1, 4) k ORDER BY k) AS weeks
		FROM perp_activity_buckets a
		WHERE a.chain_id = ?0 AND a.resolution = 'week' AND a.bucket >= ?1 AND a.bucket < ?2 AND a.new_traders > 0`,
		s.chainID, bs[0], api.NextBucket(bs[len(bs)-1], "week")).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("cohorts: %w", err)
	}
	at := map[time.Time]int{}
	for i, b := range bs {
		at[b] = i
	}
	percent := func(n, of int64) json.Number {
		return api.Number(new(big.Rat).SetFrac64(100*n, of).FloatString(2))
	}
	for _, r := range rows {
		i, ok := at[r.Cohort.UTC()]
		if !ok || r.New == 0 || len(r.W) != 4 {
			continue
		}
		out[i].NewUsers = r.New
		out[i].Week1, out[i].Week2, out[i].Week3, out[i].Week4 = percent(r.W[0], r.New), percent(r.W[1], r.New), percent(r.W[2], r.New), percent(r.W[3], r.New)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// ByDeposits is one bucket of /activity/user_distribution_by_deposits.
type ByDeposits struct {
	Labels string `json:"labels"`
	Small  int64  `json:"small_depositors"`
	Medium int64  `json:"medium_depositors"`
	Large  int64  `json:"large_depositors"`
}

// distributionByDeposits counts, per bucket, the addresses that deposited
// USDC into subaccounts by their total in the bucket: small < 1,000 USDC
// ≤ medium < 100,000 USDC ≤ large (perp_deposit_classes).
func (s *Service) distributionByDeposits(ctx context.Context, req *api.Request) (*api.Response, error) {
	res := req.Params.String("time_resolution")
	fresh, bs, err := s.window(ctx, req, res, report.DepositClasses)
	if err != nil {
		return nil, err
	}
	counts, err := s.bucketCounts(ctx, `SELECT bucket, small AS a, medium AS b, large AS c FROM perp_deposit_classes
		WHERE chain_id = ?1 AND resolution = ?0 AND bucket >= ?2 AND bucket < ?3`, bs, res)
	if err != nil {
		return nil, fmt.Errorf("depositors: %w", err)
	}
	out := make([]ByDeposits, len(bs))
	for i, b := range bs {
		out[i] = ByDeposits{Labels: b.Format(time.DateTime), Small: counts[i][0], Medium: counts[i][1], Large: counts[i][2]}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
