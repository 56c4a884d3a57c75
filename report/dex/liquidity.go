package dex

import (
	"context"
	"fmt"
	"time"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// PoolLiquidityHourly is the table of every pool's USD liquidity at the
// end of each hour (the dex_liquidity job, JobLiquidity): from the first
// hour with reserves through the hour of the job's last block, a row per
// hour for every pool with a reserve by then, whether or not anything
// changed in the hour. Its value is PoolLiquidity's.
const PoolLiquidityHourly = "osmosis_pool_liquidity_hourly"

// PoolLiquidity is the USD value of a pool's reserves (report.Reserve
// amounts, base units) at the prices of its denoms (report.Price): the
// sum of Market.USDValue over its denoms with a positive reserve and a
// price; 0 for a pool none of whose denoms has both.
func (m Market) PoolLiquidity(reserves map[string]math.Int, prices map[string]math.LegacyDec) math.LegacyDec {
	sum := math.LegacyZeroDec()
	for denom, amt := range reserves {
		p, ok := prices[denom]
		if !ok || !amt.IsPositive() {
			continue
		}
		sum = sum.Add(m.USDValue(denom, amt, p))
	}
	return sum
}

// LiquidityAt is a pool's USD liquidity (decimal text) at the I-th of the
// times asked for.
type LiquidityAt struct {
	I      int    `bun:"i"`
	PoolID int64  `bun:"pool_id"`
	USD    string `bun:"liquidity_usd"`
}

// PoolLiquidityAt is every pool's USD liquidity at each of ts, in the
// order of time and pool: the rows of t's hour, or of the table's last
// hour for a t after it (nothing changes after the job's last block); none
// before the first hour. Rows are hour-aligned, so the liquidity "at t" is
// the liquidity at the end of t's hour as far as the job has read: an
// index range per time, never a probe per pool.
func PoolLiquidityAt(ctx context.Context, db bun.IDB, chainID string, ts []time.Time) ([]LiquidityAt, error) {
	hours := make([]time.Time, len(ts))
	for i, t := range ts {
		hours[i] = t.UTC().Truncate(time.Hour)
	}
	var out []LiquidityAt
	if err := db.NewRaw(`SELECT t.i - 1 AS i, l.pool_id, l.liquidity_usd::text AS liquidity_usd
		FROM unnest(?1::timestamptz[]) WITH ORDINALITY t(at, i)
		CROSS JOIN (SELECT max(hour) AS last FROM `+PoolLiquidityHourly+` WHERE chain_id = ?0) m
		JOIN `+PoolLiquidityHourly+` l ON l.chain_id = ?0 AND l.hour = least(t.at, m.last)
		ORDER BY t.i, l.pool_id`, chainID, pgdialect.Array(hours)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("pool liquidity: %w", err)
	}
	return out, nil
}

// AssetStateHourly is the table of every denom's USD price (its latest
// close up to the hour's end, AssetPrices) and pooled amount (its reserves
// summed over the catalog's pools that hold it, PoolReserves) at the end of
// each hour, kept by the dex_liquidity job with PoolLiquidityHourly: from
// the first hour with either through the hour of the job's last block, a
// row per hour for every denom priced or pooled by then. A value not known
// by then is null.
const AssetStateHourly = "osmosis_asset_state_hourly"

// AssetState is a denom's price and pooled amount (decimal text, "" when
// null) at the I-th of the times asked for.
type AssetState struct {
	I        int    `bun:"i"`
	Denom    string `bun:"denom"`
	PriceUSD string `bun:"price_usd"`
	Reserves string `bun:"reserves"`
}

// AssetStatesAt is every denom's (denoms', unless nil) state at each of ts,
// in the order of time and denom, read as PoolLiquidityAt reads: t's hour,
// or the last hour for a t after it; none before the first.
func AssetStatesAt(ctx context.Context, db bun.IDB, chainID string, ts []time.Time, denoms []string) ([]AssetState, error) {
	filter := ""
	if denoms != nil {
		if len(denoms) == 0 {
			return nil, nil
		}
		filter = " AND s.denom = ANY(?2::text[])"
	}
	hours := make([]time.Time, len(ts))
	for i, t := range ts {
		hours[i] = t.UTC().Truncate(time.Hour)
	}
	var out []AssetState
	if err := db.NewRaw(`SELECT t.i - 1 AS i, s.denom, coalesce(s.price_usd::text, '') AS price_usd, coalesce(s.reserves::text, '') AS reserves
		FROM unnest(?1::timestamptz[]) WITH ORDINALITY t(at, i)
		CROSS JOIN (SELECT max(hour) AS last FROM `+AssetStateHourly+` WHERE chain_id = ?0) m
		JOIN `+AssetStateHourly+` s ON s.chain_id = ?0 AND s.hour = least(t.at, m.last)`+filter+`
		ORDER BY t.i, s.denom`, chainID, pgdialect.Array(hours), pgdialect.Array(denoms)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("asset states: %w", err)
	}
	return out, nil
}

// HourlyBehind says whether the dex_liquidity job's hourly tables lack what
// the rows they are built from already hold: PoolLiquidityHourly empty
// while PoolReservesLatest has a row (pools), AssetStateHourly empty while
// AssetPricesLatest has one (assets). That is the job not yet run after the
// prices and reserves, or a new version of it not yet built (an upgrade's
// rebuild commits the tables at once): an answer read from them then has
// nothing to say, not zeros.
func HourlyBehind(ctx context.Context, db bun.IDB, chainID string) (pools, assets bool, err error) {
	if err := db.NewRaw(`SELECT NOT EXISTS (SELECT 1 FROM `+PoolLiquidityHourly+` WHERE chain_id = ?0)
			AND EXISTS (SELECT 1 FROM `+PoolReservesLatest+` WHERE chain_id = ?0),
		NOT EXISTS (SELECT 1 FROM `+AssetStateHourly+` WHERE chain_id = ?0)
			AND EXISTS (SELECT 1 FROM `+AssetPricesLatest+` WHERE chain_id = ?0)`, chainID).Scan(ctx, &pools, &assets); err != nil {
		return false, false, fmt.Errorf("hourly liquidity built: %w", err)
	}
	return pools, assets, nil
}
