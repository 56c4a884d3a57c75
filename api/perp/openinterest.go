package perp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
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
		// be valued: a total without it would be wrong. The markets with
		// open interest are read by skipping from one to the next along
		// the primary key, a step per market instead of a row per hour.
		var missing []int64
		if err := api.Reader(ctx, s.db).NewRaw(`WITH RECURSIVE o AS (
				(SELECT perpetual_id FROM perp_open_interest_hourly WHERE chain_id = ?0 ORDER BY perpetual_id LIMIT 1)
				UNION ALL
				SELECT (SELECT h.perpetual_id FROM perp_open_interest_hourly h WHERE h.chain_id = ?0 AND h.perpetual_id > o.perpetual_id
					ORDER BY h.perpetual_id LIMIT 1)
				FROM o WHERE o.perpetual_id IS NOT NULL
			)
			SELECT perpetual_id FROM o WHERE perpetual_id IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM dydx_perpetuals p JOIN dydx_markets m ON m.chain_id = p.chain_id AND m.market_id = p.market_id
				WHERE p.chain_id = ?0 AND p.perpetual_id = o.perpetual_id)
			ORDER BY perpetual_id`, s.chainID).Scan(ctx, &missing); err != nil {
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
	// Each bucket moves the terms of the perpetuals whose open interest
	// or price changed in it, and the total by their difference.
	exps := make([]*int64, len(catalog))
	byMarket, byPerp := map[int64][]int{}, map[int64]int{}
	for k, c := range catalog {
		if c.Exponent != nil {
			e := c.Atomic + *c.Exponent
			exps[k] = &e
		}
		byMarket[c.Market] = append(byMarket[c.Market], k)
		byPerp[c.Perp] = k
	}
	v := newValuer(exps)
	var i, j int
	for n, b := range bs {
		end := api.NextBucket(b, res)
		for ; i < len(ois) && ois[i].Hour.Before(end); i++ {
			if err := v.setQuantums(byPerp[ois[i].Key], ois[i].Value); err != nil {
				return nil, err
			}
		}
		for ; j < len(prices) && prices[j].Hour.Before(end); j++ {
			for _, k := range byMarket[prices[j].Key] {
				if err := v.setPrice(k, prices[j].Value); err != nil {
					return nil, err
				}
			}
		}
		out[n] = OpenInterest{Labels: b.Format(time.DateTime), OpenInterest: api.Number(v.String())}
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

// valuer keeps the total value of perpetual positions in USDC, exactly:
// per perpetual k, quantums × price × 10^(atomic_resolution + exponent),
// held as an integer number of 10^-scale units, scale being the least
// that makes every term an integer and keeps 6 decimals. A change moves
// one term and the total by its difference, so a bucket costs what
// changed in it, not every market.
type valuer struct {
	scale    int64
	factors  []*big.Int // per perpetual: 10^(exponent + scale), nil when it cannot be valued
	quantums []*big.Int
	prices   []*big.Int
	terms    []*big.Int
	total    *big.Int
}

// newValuer values perpetuals whose atomic_resolution + exponent are
// exps (nil: a perpetual without a price exponent, never valued).
func newValuer(exps []*int64) *valuer {
	n := len(exps)
	v := &valuer{scale: 6, factors: make([]*big.Int, n), quantums: make([]*big.Int, n),
		prices: make([]*big.Int, n), terms: make([]*big.Int, n), total: new(big.Int)}
	for _, e := range exps {
		if e != nil {
			v.scale = max(v.scale, -*e)
		}
	}
	for k, e := range exps {
		v.terms[k] = new(big.Int)
		if e != nil {
			v.factors[k] = new(big.Int).Exp(big.NewInt(10), big.NewInt(*e+v.scale), nil)
		}
	}
	return v
}

func (v *valuer) setQuantums(k int, s string) (err error) {
	if v.quantums[k], err = integer(s); err != nil {
		return fmt.Errorf("open interest: %w", err)
	}
	v.revalue(k)
	return nil
}

func (v *valuer) setPrice(k int, s string) (err error) {
	if v.prices[k], err = integer(s); err != nil {
		return fmt.Errorf("price: %w", err)
	}
	v.revalue(k)
	return nil
}

func (v *valuer) revalue(k int) {
	v.total.Sub(v.total, v.terms[k])
	t := v.terms[k].SetInt64(0)
	if v.quantums[k] != nil && v.prices[k] != nil && v.factors[k] != nil {
		t.Mul(v.quantums[k], v.prices[k])
		t.Mul(t, v.factors[k])
	}
	v.total.Add(v.total, t)
}

// String is the total with 6 decimals, the last rounded half away from
// zero (as big.Rat's FloatString(6)).
func (v *valuer) String() string {
	q, r := new(big.Int), new(big.Int)
	d := new(big.Int).Exp(big.NewInt(10), big.NewInt(v.scale-6), nil)
	q.QuoRem(new(big.Int).Abs(v.total), d, r)
	if r.Lsh(r, 1).Cmp(d) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	digits := q.String()
	if len(digits) < 7 {
		digits = strings.Repeat("0", 7-len(digits)) + digits
	}
	sign := ""
	if v.total.Sign() < 0 {
		sign = "-"
	}
	return sign + digits[:len(digits)-6] + "." + digits[len(digits)-6:]
}

// integer parses a report's integer column (quantums, oracle prices).
func integer(s string) (*big.Int, error) {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("%q is not an integer", s)
	}
	return n, nil
}
