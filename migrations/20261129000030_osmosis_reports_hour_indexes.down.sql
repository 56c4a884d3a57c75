DROP INDEX CONCURRENTLY IF EXISTS osmosis_asset_prices_hour_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_pool_reserves_hourly_hour_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_pool_liquidity_daily_day_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_balances_hourly_hour_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_locked_hourly_hour_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_pool_shares_hourly_hour_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_cl_position_liquidity_hourly_hour_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_pool_rewards_hourly_hour_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_cl_state_hourly_hour_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_cl_tick_changes_hour_idx;
