package dex

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// CLEarnings is the table of what one unit of in-range liquidity of each
// concentrated-liquidity pool earned per hour, per source (fees, native,
// boost: PoolRewards' sources), with the pool's tick at the hour's end,
// kept by the dex_cl_earnings job (JobCLEarnings). Each value is the hour's
// earnings over the pool's active liquidity then, in units of
// 10^-EarnedDigits USD truncated toward zero; hours without active
// liquidity have no row.
const CLEarnings = "osmosis_cl_earnings_hourly"

// EarnedDigits is the precision of CLEarnings: an hour's quotient is
// truncated by less than 10^-80 USD per unit of liquidity, far below the
// 18 decimals an answer shows even times a position's liquidity and a
// year's annualisation. (Exact quotients would carry the product of a
// window's liquidity values as their denominator.)
const EarnedDigits = 80

// EarnedUnit is 10^EarnedDigits.
var EarnedUnit = new(big.Int).Exp(big.NewInt(10), big.NewInt(EarnedDigits), nil)

// Range is a position's pool and ticks [Lower, Upper).
type Range struct {
	Pool         int64
	Lower, Upper int64
}

// Earned is what a unit of liquidity of the I-th range earned over a
// window, per source, in units of 10^-EarnedDigits USD (integer text).
type Earned struct {
	I      int    `bun:"i"`
	Fees   string `bun:"fees"`
	Native string `bun:"native"`
	Boost  string `bun:"boost"`
}

// EarnedFrom is, for each of ranges, the sums of its pool's CLEarnings
// hours from the hour of from on whose tick is in the range (0 without
// any), in the order of ranges: an index range of the pool's window per
// range.
func EarnedFrom(ctx context.Context, db bun.IDB, chainID string, from time.Time, ranges []Range) ([]Earned, error) {
	if len(ranges) == 0 {
		return nil, nil
	}
	pools, lowers, uppers := make([]int64, len(ranges)), make([]int64, len(ranges)), make([]int64, len(ranges))
	for i, r := range ranges {
		pools[i], lowers[i], uppers[i] = r.Pool, r.Lower, r.Upper
	}
	var out []Earned
	if err := db.NewRaw(`SELECT q.i - 1 AS i, coalesce(sum(e.fees), 0)::text AS fees, coalesce(sum(e.native), 0)::text AS native,
			coalesce(sum(e.boost), 0)::text AS boost
		FROM unnest(?1::bigint[], ?2::bigint[], ?3::bigint[]) WITH ORDINALITY q(pool_id, lower, upper, i)
		LEFT JOIN `+CLEarnings+` e ON e.chain_id = ?0 AND e.pool_id = q.pool_id AND e.hour >= ?4
			AND e.tick >= q.lower AND e.tick < q.upper
		GROUP BY q.i ORDER BY q.i`, chainID, pgdialect.Array(pools), pgdialect.Array(lowers), pgdialect.Array(uppers),
		from.UTC().Truncate(time.Hour)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("concentrated pools' earnings: %w", err)
	}
	if len(out) != len(ranges) {
		return nil, fmt.Errorf("concentrated pools' earnings: %d sums for %d ranges", len(out), len(ranges))
	}
	return out, nil
}
