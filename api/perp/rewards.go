package perp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// dailyRewards are the rewards paid per day up to end (perp_rewards_daily)
// in NATIVE and in USD at the day's last oracle price of the native
// token's market (nil when there is none yet).
type dailyReward struct {
	Day    time.Time `bun:"day"`
	Native string    `bun:"native"`
	USD    *string   `bun:"usd"`
}

// rewardsPriced is the SQL of the rewards of each (day, address) with their
// NATIVE and USD values (at the day's last oracle price; a day before the
// first price at that first price; NULL while there is no price or the
// market is not in the catalog); ?0 chain. Powers of ten are numeric
// literals (exact; see aggregator/perp).
const rewardsPriced = `WITH n AS (
		SELECT decimals, market_id FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1
	), m AS (
		SELECT d.exponent FROM dydx_markets d, n WHERE d.chain_id = ?0 AND d.market_id = n.market_id ORDER BY d.height DESC LIMIT 1
	), r AS (
		SELECT r.day, r.address, r.amount * ('1e' || -n.decimals)::numeric AS native,
			r.amount * ('1e' || (m.exponent - n.decimals))::numeric * coalesce(
				(SELECT p.price FROM perp_price_hourly p WHERE p.chain_id = ?0 AND p.market_id = n.market_id
					AND p.hour < r.day + interval '24 hours' ORDER BY p.hour DESC LIMIT 1),
				(SELECT p.price FROM perp_price_hourly p WHERE p.chain_id = ?0 AND p.market_id = n.market_id
					ORDER BY p.hour LIMIT 1)) AS usd
		FROM perp_rewards_daily r CROSS JOIN n LEFT JOIN m ON true WHERE r.chain_id = ?0
	)`

// rewardsUnit reads the unit parameter: dollar, or native (token is the
// same).
func rewardsUnit(req *api.Request) (dollar bool) { return req.Params.String("unit") == "dollar" }

// totalRewards is, per day in the range up to the day of the last
// aggregated block, the trading rewards paid that day (increase) and in all
// up to its end (total_rewards), in NATIVE or in USD (each day's payments at
// that day's last oracle price).
func (s *Service) totalRewards(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "day", report.PriceHourly, report.RewardsDaily)
	if err != nil {
		return nil, err
	}
	type row struct {
		Labels string      `json:"labels"`
		Total  json.Number `json:"total_rewards"`
		Inc    json.Number `json:"increase"`
	}
	out := make([]row, 0, len(bs))
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	var days []dailyReward
	if err := api.Reader(ctx, s.db).NewRaw(rewardsPriced+`
		SELECT day, sum(native)::text AS native, sum(usd)::text AS usd FROM r WHERE day <= ?1 GROUP BY day ORDER BY day`,
		s.chainID, bs[len(bs)-1]).Scan(ctx, &days); err != nil {
		return nil, fmt.Errorf("rewards: %w", err)
	}
	dollar := rewardsUnit(req)
	total := new(big.Rat)
	byDay := map[time.Time]*big.Rat{}
	for _, d := range days {
		v, err := rewardValue(d.Day, d.Native, d.USD, dollar)
		if err != nil {
			return nil, err
		}
		if d.Day.UTC().Before(bs[0]) {
			total.Add(total, v)
		} else {
			byDay[d.Day.UTC()] = v
		}
	}
	for _, b := range bs {
		inc := byDay[b]
		if inc == nil {
			inc = new(big.Rat)
		}
		total.Add(total, inc)
		out = append(out, row{Labels: b.Format(time.DateTime), Total: api.Number(total.FloatString(18)), Inc: api.Number(inc.FloatString(18))})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// rewardValue is a day's rewards in the unit asked for; USD without a
// price is 503.
func rewardValue(day time.Time, native string, usd *string, dollar bool) (*big.Rat, error) {
	if !dollar {
		return rat(native)
	}
	if usd == nil {
		return nil, fmt.Errorf("no oracle price of the native token by the end of %s: %w", day.UTC().Format(time.DateOnly), problem.ErrNotIndexed)
	}
	return rat(*usd)
}

// usersPeriodRewards ranks the addresses by the trading rewards paid to
// them on the days of the range (at most 1000, descending; ties by
// address), in NATIVE or USD.
func (s *Service) usersPeriodRewards(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.window(ctx, req, "day", report.PriceHourly, report.RewardsDaily)
	if err != nil {
		return nil, err
	}
	type row struct {
		Address string      `json:"address"`
		Rewards json.Number `json:"rewards"`
	}
	out := []row{}
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	col := "native"
	if rewardsUnit(req) {
		col = "usd"
	}
	var rows []struct {
		Address string  `bun:"address"`
		Value   *string `bun:"value"`
		Missing bool    `bun:"missing"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(rewardsPriced+`
		SELECT address, sum(`+col+`)::text AS value, bool_or(`+col+` IS NULL) AS missing FROM r
		WHERE day >= ?1 AND day <= ?2 GROUP BY address ORDER BY sum(`+col+`) DESC NULLS LAST, address LIMIT 1000`,
		s.chainID, bs[0], bs[len(bs)-1]).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("rewards: %w", err)
	}
	for _, r := range rows {
		if r.Missing || r.Value == nil {
			return nil, fmt.Errorf("no oracle price of the native token for a day of the range: %w", problem.ErrNotIndexed)
		}
		out = append(out, row{Address: r.Address, Rewards: api.Number(*r.Value)})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
