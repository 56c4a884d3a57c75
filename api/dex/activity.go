package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// Metric is a value and its current change per second.
type Metric struct {
	Value             json.Number `json:"value"`
	GrowthRateSeconds json.Number `json:"growth_rate_seconds"`
}

// TradingMetrics is the trading metrics answer.
type TradingMetrics struct {
	AssetsInChain     Metric `json:"assets_in_chain"`
	TradersLast30Days Metric `json:"traders_last_30_days"`
	CumulativeVolume  Metric `json:"cumulative_volume"`
	Volume24h         Metric `json:"volume_24h"`
}

const secondsPerDay = 86400

// tradingMetrics reports, at the request time:
//   - assets_in_chain: the USD value of the assets in the dex pools (every
//     pool's reserves at the latest prices), growing by its change over the
//     last 24 hours spread over a day;
//   - traders_last_30_days: distinct wallets that sent a swap on the 30 UTC
//     days ending today (osmosis_traders_30d), growing by the change from
//     the 30 days before, spread over 30 days;
//   - cumulative_volume: all-time USD swap volume (report.VolumeBefore
//     today, osmosis_pool_volume_hourly since),
//     growing by the last 24 hours' volume per second;
//   - volume_24h: the volume of the hourly buckets that overlap the last 24
//     hours, growing by its change from the 24 hours before, per second.
func (s *Service) tradingMetrics(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	now := req.Now.UTC()
	liq, _, err := s.poolLiquidityAtEach(ctx, []time.Time{now, now.Add(-24 * time.Hour)})
	if err != nil {
		return nil, err
	}
	total := func(liq map[int64]math.LegacyDec) math.LegacyDec {
		sum := math.LegacyZeroDec()
		for _, v := range liq {
			sum = sum.Add(v)
		}
		return sum
	}
	assets, assetsBefore := total(liq[0]), total(liq[1])
	today := now.Truncate(24 * time.Hour)
	var traders, tradersBefore int64
	// The windows [today-29, today] and [today-59, today-30]; a window
	// without a row had no trader.
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT coalesce((SELECT traders FROM osmosis_traders_30d WHERE chain_id = ?0 AND day = ?1), 0),
			coalesce((SELECT traders FROM osmosis_traders_30d WHERE chain_id = ?0 AND day = ?2), 0)`,
		s.market.ChainID, today, today.Add(-30*24*time.Hour)).Scan(ctx, &traders, &tradersBefore); err != nil {
		return nil, fmt.Errorf("traders: %w", err)
	}
	day := now.Add(-24 * time.Hour).Truncate(time.Hour)
	// All time = the days before today (their running total) plus today's hours.
	before, err := report.VolumeBefore(ctx, api.Reader(ctx, s.db), s.market.ChainID, today)
	if err != nil {
		return nil, err
	}
	var todays, v24, vPrev string
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT coalesce(sum(volume_usd) FILTER (WHERE hour >= ?4), 0)::text,
			coalesce(sum(volume_usd) FILTER (WHERE hour >= ?1), 0)::text,
			coalesce(sum(volume_usd) FILTER (WHERE hour >= ?2 AND hour < ?1), 0)::text
		FROM osmosis_pool_volume_hourly WHERE chain_id = ?0 AND hour >= least(?2::timestamptz, ?4::timestamptz) AND hour <= ?3`,
		s.market.ChainID, day, day.Add(-24*time.Hour), now, today).
		Scan(ctx, &todays, &v24, &vPrev); err != nil {
		return nil, fmt.Errorf("volume: %w", err)
	}
	vol, err := decs(before, v24, vPrev, todays)
	if err != nil {
		return nil, err
	}
	vol[0] = vol[0].Add(vol[3])
	perDay := func(d math.LegacyDec) json.Number { return decNumber(d.QuoInt64(secondsPerDay)) }
	out := TradingMetrics{
		AssetsInChain:     Metric{decNumber(assets), perDay(assets.Sub(assetsBefore))},
		TradersLast30Days: Metric{json.Number(strconv.FormatInt(traders, 10)), perDay(math.LegacyNewDec(traders - tradersBefore).QuoInt64(30))},
		CumulativeVolume:  Metric{decNumber(vol[0]), perDay(vol[1])},
		Volume24h:         Metric{decNumber(vol[1]), perDay(vol[1].Sub(vol[2]))},
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// decs parses decimal strings.
func decs(ss ...string) ([]math.LegacyDec, error) {
	out := make([]math.LegacyDec, len(ss))
	for i, s := range ss {
		d, err := math.LegacyNewDecFromStr(s)
		if err != nil {
			return nil, fmt.Errorf("decimal %q: %w", s, err)
		}
		out[i] = d
	}
	return out, nil
}

// Whale is one wallet's USD activity over the last 7 days.
type Whale struct {
	Wallet  string      `json:"wallet"`
	Trading json.Number `json:"trading_volume_last_7_days"`
	LP      json.Number `json:"lp_volume_last_7_days"`
	Staking json.Number `json:"staking_volume_last_7_days"`
	Total   json.Number `json:"total_volume_last_7_days"`
}

// whaleOrder maps the order parameter to the ranking column.
var whaleOrder = map[string]string{
	"active_volume_last_7_days":      "total",
	"trading_volume_last_7_days":     "trading",
	"lp_volume_last_7_days":          "lp",
	"delegations_volume_last_7_days": "staking",
}

// activeWhales ranks the wallets active on the 7 UTC days ending today
// (osmosis_wallet_daily, dex_activity job) by the ordered volume, then by
// wallet; wallets whose ordered volume is 0 are left out.
func (s *Service) activeWhales(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.beginJob(ctx, report.JobActivity)
	if err != nil {
		return nil, err
	}
	col, ok := whaleOrder[req.Params.String("order")]
	if !ok {
		return nil, problem.BadParam("order", "unknown order")
	}
	now := req.Now.UTC()
	today := now.Truncate(24 * time.Hour)
	var rows []struct {
		Wallet  string `bun:"wallet"`
		Trading string `bun:"trading"`
		LP      string `bun:"lp"`
		Staking string `bun:"staking"`
		Total   string `bun:"total"`
	}
	// The job's week when it ends today (an index range per order), else
	// the daily rows of the week summed.
	var end time.Time
	err = api.Reader(ctx, s.db).NewRaw("SELECT day FROM "+report.WalletWeekEnd+" WHERE chain_id = ?", s.market.ChainID).Scan(ctx, &end)
	if err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("week of the wallets: %w", err)
	}
	if err == nil && end.Equal(today) {
		if err := api.Reader(ctx, s.db).NewRaw(`SELECT address AS wallet, trading_usd::text AS trading, lp_usd::text AS lp, staking_usd::text AS staking,
				total_usd::text AS total FROM `+report.WalletWeek+` WHERE chain_id = ? AND `+col+`_usd > 0 ORDER BY `+col+`_usd DESC, address LIMIT ?`,
			s.market.ChainID, req.Params.Int("limit")).Scan(ctx, &rows); err != nil {
			return nil, fmt.Errorf("whales: %w", err)
		}
	} else if err := api.Reader(ctx, s.db).NewRaw(`SELECT wallet, trading::text, lp::text, staking::text, total::text FROM (
			SELECT address AS wallet, sum(trading_usd) AS trading, sum(lp_usd) AS lp, sum(staking_usd) AS staking,
				sum(trading_usd + lp_usd + staking_usd) AS total
			FROM osmosis_wallet_daily WHERE chain_id = ? AND day >= ? AND day <= ? GROUP BY address) w
		WHERE w.`+col+` > 0 ORDER BY w.`+col+` DESC, w.wallet LIMIT ?`,
		s.market.ChainID, today.AddDate(0, 0, -6), now, req.Params.Int("limit")).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("whales: %w", err)
	}
	out := make([]Whale, len(rows))
	for i, r := range rows {
		out[i] = Whale{Wallet: r.Wallet, Trading: api.Number(r.Trading), LP: api.Number(r.LP), Staking: api.Number(r.Staking), Total: api.Number(r.Total)}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// liquidityFlow is the daily net USD liquidity flow (added minus removed,
// osmosis_pool_flow_daily, dex_activity job) of each requested pool and of
// all pools (total), for every day of the series (Service.days: from the
// chain's first indexed day to the job's last). An unknown pool id is a 400.
func (s *Service) liquidityFlow(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, days, err := s.days(ctx, req, report.JobActivity)
	if err != nil {
		return nil, err
	}
	cols := req.Params.Strings("pool")
	var known []int64
	if err := api.Reader(ctx, s.db).NewRaw("SELECT pool_id FROM osmosis_known_pools WHERE chain_id = ?", s.market.ChainID).Scan(ctx, &known); err != nil {
		return nil, fmt.Errorf("pools: %w", err)
	}
	isPool := map[string]bool{}
	for _, id := range known {
		isPool[strconv.FormatInt(id, 10)] = true
	}
	for _, c := range cols {
		if c != "total" && !isPool[c] {
			return nil, problem.BadParam("pool", fmt.Sprintf("%q is not a pool id (query_key of /aux/pool_listings) or total", c))
		}
	}
	out := make([]api.SeriesRow, 0, len(days))
	if len(days) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	first, last := days[0], days[len(days)-1]
	var flows []struct {
		PoolID int64     `bun:"pool_id"`
		Day    time.Time `bun:"day"`
		Net    string    `bun:"net"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT pool_id, day, (added_usd - removed_usd)::text AS net FROM osmosis_pool_flow_daily
		WHERE chain_id = ? AND day >= ? AND day <= ?`, s.market.ChainID, first, last).Scan(ctx, &flows); err != nil {
		return nil, fmt.Errorf("liquidity flows: %w", err)
	}
	byDay := map[time.Time]map[string]math.LegacyDec{}
	for _, f := range flows {
		net, err := math.LegacyNewDecFromStr(f.Net)
		if err != nil {
			return nil, fmt.Errorf("flow %q: %w", f.Net, err)
		}
		d := f.Day.UTC()
		if byDay[d] == nil {
			byDay[d] = map[string]math.LegacyDec{"total": math.LegacyZeroDec()}
		}
		byDay[d][strconv.FormatInt(f.PoolID, 10)] = net
		byDay[d]["total"] = byDay[d]["total"].Add(net)
	}
	for _, d := range days {
		row := api.SeriesRow{Labels: d.Format(time.DateTime), Columns: cols, Values: make([]json.Number, len(cols))}
		for i, c := range cols {
			row.Values[i] = decNumber(byDay[d][c])
		}
		out = append(out, row)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
