package dex

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// PoolRewards is the table of what each pool's liquidity providers earned
// per hour in USD (fees_usd, native_usd, boost_usd, superfluid_usd), kept by
// the dex_pool_rewards job (JobPoolRewards).
const PoolRewards = "osmosis_pool_rewards_hourly"

// PoolRewardsDaily holds PoolRewards summed per pool and UTC day (the day
// in progress too), kept by the same job in the transaction that rewrites
// the hours, so a window of days reads a row per pool and day.
const PoolRewardsDaily = "osmosis_pool_rewards_daily"

// RewardSums is what a pool earned over a window, per source, as exact
// decimal text (sums of PoolRewards' numerics).
type RewardSums struct {
	PoolID     int64  `bun:"pool_id"`
	Fees       string `bun:"fees"`
	Native     string `bun:"native"`
	Boost      string `bun:"boost"`
	Superfluid string `bun:"sf"`
}

// PoolRewardsFrom is each pool's (pools', unless nil) sums of its
// PoolRewards hours from the hour of from on (every hour that overlaps
// [from, ∞)), pools without such an hour left out. The hours of from's day
// come from PoolRewards, the whole days after it from PoolRewardsDaily: a
// 7-day window reads 31 rows a pool at most instead of 168. The sums are
// the same numerics either way (a numeric sum is exact; its scale is the
// largest of its terms').
func PoolRewardsFrom(ctx context.Context, db bun.IDB, chainID string, from time.Time, pools []int64) ([]RewardSums, error) {
	hour := from.UTC().Truncate(time.Hour)
	day := hour.Truncate(24 * time.Hour)
	if day.Before(hour) {
		day = day.Add(24 * time.Hour)
	}
	filter := ""
	if pools != nil {
		if len(pools) == 0 {
			return nil, nil
		}
		filter = " AND pool_id = ANY(?3::bigint[])"
	}
	var out []RewardSums
	if err := db.NewRaw(`SELECT pool_id, sum(fees_usd)::text AS fees, sum(native_usd)::text AS native, sum(boost_usd)::text AS boost,
			sum(superfluid_usd)::text AS sf FROM (
			SELECT pool_id, fees_usd, native_usd, boost_usd, superfluid_usd FROM `+PoolRewards+`
				WHERE chain_id = ?0 AND hour >= ?1 AND hour < ?2`+filter+`
			UNION ALL
			SELECT pool_id, fees_usd, native_usd, boost_usd, superfluid_usd FROM `+PoolRewardsDaily+`
				WHERE chain_id = ?0 AND day >= ?2`+filter+`) r
		GROUP BY pool_id ORDER BY pool_id`, chainID, hour, day, pgdialect.Array(pools)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("pool rewards from %s: %w", hour.Format(time.RFC3339), err)
	}
	return out, nil
}

// KeepPoolRewardsDaily rewrites PoolRewardsDaily from the UTC day of h0 on
// as the sums of each pool's PoolRewards hours of the day, after the job
// rewrote its hours from h0 on, in the job's transaction. It returns the
// rows written.
func KeepPoolRewardsDaily(ctx context.Context, tx bun.Tx, chainID string, h0 time.Time) (int64, error) {
	d0 := h0.UTC().Truncate(24 * time.Hour)
	if _, err := tx.NewRaw("DELETE FROM "+PoolRewardsDaily+" WHERE chain_id = ? AND day >= ?", chainID, d0).Exec(ctx); err != nil {
		return 0, fmt.Errorf("delete daily pool rewards: %w", err)
	}
	res, err := tx.NewRaw(`INSERT INTO `+PoolRewardsDaily+` (chain_id, pool_id, day, fees_usd, native_usd, boost_usd, superfluid_usd)
		SELECT chain_id, pool_id, date_trunc('day', hour, 'UTC'), sum(fees_usd), sum(native_usd), sum(boost_usd), sum(superfluid_usd)
		FROM `+PoolRewards+` WHERE chain_id = ? AND hour >= ? GROUP BY 1, 2, 3`, chainID, d0).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("roll up pool rewards: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("roll up pool rewards: %w", err)
	}
	return n, nil
}

// PoolRewardsDailyBehind says whether PoolRewardsDaily is empty while
// PoolRewards has rows: a version of the job that keeps it not yet built
// (an upgrade's rebuild commits both at once), when window sums read from
// it would leave out the whole days.
func PoolRewardsDailyBehind(ctx context.Context, db bun.IDB, chainID string) (bool, error) {
	var behind bool
	if err := db.NewRaw(`SELECT NOT EXISTS (SELECT 1 FROM `+PoolRewardsDaily+` WHERE chain_id = ?0)
		AND EXISTS (SELECT 1 FROM `+PoolRewards+` WHERE chain_id = ?0)`, chainID).Scan(ctx, &behind); err != nil {
		return false, fmt.Errorf("daily pool rewards built: %w", err)
	}
	return behind, nil
}
