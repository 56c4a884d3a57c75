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

// OpenInterest is one bucket of /trading/open_interest.
type OpenInterest struct {
	Labels       string      `json:"labels"`
	OpenInterest json.Number `json:"open_interest"`
}

// change is a value of a key (perpetual or market) from an hour on.
type change struct {
	Key   int64     `bun:"key"`
	Hour  time.Time `bun:"hour"`
	Value string    `bun:"value"`
}

// openInterest is, per bucket (granularity, default hour), the open
// interest of one market or all at the bucket's end (for the bucket of the
// last aggregated block: at that block) in USDC at the oracle price then:
// base quantums × 10^atomic_resolution × price × 10^exponent, rounded to
// 6 decimals (perp_open_interest_hourly, perp_price_hourly, the genesis
// catalogs).
func (s *Service) openInterest(ctx context.Context, req *api.Request) (*api.Response, error) {
	id, all, err := s.market(ctx, "market", req.Params.String("market"))
	if err != nil {
		return nil, err
	}
	res := req.Params.String("granularity")
	fresh, bs, err := s.window(ctx, req, res, report.OpenInterestHourly, report.PriceHourly)
	if err != nil {
		return nil, err
	}
	out := make([]OpenInterest, len(bs))
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	var catalog []struct {
		Perp     int64  `bun:"perpetual_id"`
		Market   int64  `bun:"market_id"`
		Atomic   int64  `bun:"atomic_resolution"`
		Exponent *int64 `bun:"exponent"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT p.perpetual_id, p.market_id, p.atomic_resolution, m.exponent
		FROM (SELECT DISTINCT ON (perpetual_id) perpetual_id, market_id, atomic_resolution FROM dydx_perpetuals
			WHERE chain_id = ?0 ORDER BY perpetual_id, height DESC) p
		LEFT JOIN (SELECT DISTINCT ON (market_id) market_id, exponent FROM dydx_markets
			WHERE chain_id = ?0 ORDER BY market_id, height DESC) m ON m.market_id = p.market_id
		WHERE ?1 OR p.perpetual_id = ?2`, s.chainID, all, id).Scan(ctx, &catalog); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	for _, c := range catalog {
		if !all && c.Exponent == nil {
			return nil, fmt.Errorf("the price market %d of perpetual %d is not in the catalog: %w", c.Market, c.Perp, problem.ErrNotIndexed)
		}
	}
	if all {
		// A market missing from the catalog (listed after genesis) cannot
		// be valued: a total without it would be wrong.
		var missing []int64
		if err := api.Reader(ctx, s.db).NewRaw(`SELECT DISTINCT perpetual_id FROM perp_open_interest_hourly o WHERE chain_id = ?0
			AND NOT EXISTS (SELECT 1 FROM dydx_perpetuals p JOIN dydx_markets m ON m.chain_id = p.chain_id AND m.market_id = p.market_id
				WHERE p.chain_id = ?0 AND p.perpetual_id = o.perpetual_id)`, s.chainID).Scan(ctx, &missing); err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("perpetuals %v are not in the market catalog (listed after genesis): %w", missing, problem.ErrNotIndexed)
		}
	}
	perps := make([]int64, 0, len(catalog))
	markets := make([]int64, 0, len(catalog))
	for _, c := range catalog {
		perps, markets = append(perps, c.Perp), append(markets, c.Market)
	}
	firstEnd, lastEnd := api.NextBucket(bs[0], res), api.NextBucket(bs[len(bs)-1], res)
	ois, err := s.changes(ctx, "perp_open_interest_hourly", "perpetual_id", "open_interest", perps, firstEnd, lastEnd)
	if err != nil {
		return nil, err
	}
	prices, err := s.changes(ctx, "perp_price_hourly", "market_id", "price", markets, firstEnd, lastEnd)
	if err != nil {
		return nil, err
	}
	oi, price := map[int64]*big.Rat{}, map[int64]*big.Rat{}
	var i, j int
	for n, b := range bs {
		end := api.NextBucket(b, res)
		for ; i < len(ois) && ois[i].Hour.Before(end); i++ {
			if oi[ois[i].Key], err = rat(ois[i].Value); err != nil {
				return nil, err
			}
		}
		for ; j < len(prices) && prices[j].Hour.Before(end); j++ {
			if price[prices[j].Key], err = rat(prices[j].Value); err != nil {
				return nil, err
			}
		}
		total := new(big.Rat)
		for _, c := range catalog {
			q, p := oi[c.Perp], price[c.Market]
			if q == nil || q.Sign() == 0 || p == nil || c.Exponent == nil {
				continue
			}
			v := new(big.Rat).Mul(q, p)
			v.Mul(v, pow10(c.Atomic+*c.Exponent))
			total.Add(total, v)
		}
		out[n] = OpenInterest{Labels: b.Format(time.DateTime), OpenInterest: api.Number(total.FloatString(6))}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// changes reads a per-hour report column for keys: each key's latest row
// before firstEnd, then every row in [firstEnd, lastEnd), ordered by hour.
func (s *Service) changes(ctx context.Context, table, key, value string, keys []int64, firstEnd, lastEnd time.Time) ([]change, error) {
	var out []change
	if len(keys) == 0 {
		return out, nil
	}
	q := `SELECT * FROM (
			SELECT DISTINCT ON (` + key + `) ` + key + ` AS key, hour, ` + value + `::text AS value FROM ` + table + `
			WHERE chain_id = ?0 AND ` + key + ` = ANY(?1) AND hour < ?2 ORDER BY ` + key + `, hour DESC) first
		UNION ALL
		SELECT ` + key + `, hour, ` + value + `::text FROM ` + table + `
			WHERE chain_id = ?0 AND ` + key + ` = ANY(?1) AND hour >= ?2 AND hour < ?3
		ORDER BY hour, key`
	if err := api.Reader(ctx, s.db).NewRaw(q, s.chainID, pgArray(keys), firstEnd, lastEnd).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", table, err)
	}
	return out, nil
}

func rat(s string) (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a number", s)
	}
	return r, nil
}

// pow10 is 10^e as a rational.
func pow10(e int64) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs(e)), nil)
	if e < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), p)
	}
	return new(big.Rat).SetInt(p)
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
