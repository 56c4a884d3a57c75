-- The dex jobs rewrite their rows from the first hour (or day) with new
-- data: DELETE ... WHERE chain_id = ? AND hour >= ?. On these tables the
-- primary key leads with the row's key (denom, pool, address, position),
-- so each run scanned the chain's whole table, a cost that grew with every
-- hour of history (Postgres 15 has no skip scan). An index by (chain_id,
-- hour) makes the delete read only the hours it removes. Built without
-- blocking the jobs or the API. Each is dropped first: a build that was
-- interrupted leaves an invalid index that IF NOT EXISTS would keep (the
-- migration is applied again as a whole until it succeeds).
DROP INDEX CONCURRENTLY IF EXISTS osmosis_asset_prices_hour_idx;

--bun:split

CREATE INDEX CONCURRENTLY osmosis_asset_prices_hour_idx ON osmosis_asset_prices (chain_id, hour);

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_pool_reserves_hourly_hour_idx;

--bun:split

CREATE INDEX CONCURRENTLY osmosis_pool_reserves_hourly_hour_idx ON osmosis_pool_reserves_hourly (chain_id, hour);

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_pool_liquidity_daily_day_idx;

--bun:split

CREATE INDEX CONCURRENTLY osmosis_pool_liquidity_daily_day_idx ON osmosis_pool_liquidity_daily (chain_id, day);

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_balances_hourly_hour_idx;

--bun:split

CREATE INDEX CONCURRENTLY osmosis_balances_hourly_hour_idx ON osmosis_balances_hourly (chain_id, hour);

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_locked_hourly_hour_idx;

--bun:split

CREATE INDEX CONCURRENTLY osmosis_locked_hourly_hour_idx ON osmosis_locked_hourly (chain_id, hour);

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_pool_shares_hourly_hour_idx;

--bun:split

CREATE INDEX CONCURRENTLY osmosis_pool_shares_hourly_hour_idx ON osmosis_pool_shares_hourly (chain_id, hour);

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_cl_position_liquidity_hourly_hour_idx;

--bun:split

CREATE INDEX CONCURRENTLY osmosis_cl_position_liquidity_hourly_hour_idx ON osmosis_cl_position_liquidity_hourly (chain_id, hour);

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_pool_rewards_hourly_hour_idx;

--bun:split

CREATE INDEX CONCURRENTLY osmosis_pool_rewards_hourly_hour_idx ON osmosis_pool_rewards_hourly (chain_id, hour);

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_cl_state_hourly_hour_idx;

--bun:split

CREATE INDEX CONCURRENTLY osmosis_cl_state_hourly_hour_idx ON osmosis_cl_state_hourly (chain_id, hour);

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS osmosis_cl_tick_changes_hour_idx;

--bun:split

CREATE INDEX CONCURRENTLY osmosis_cl_tick_changes_hour_idx ON osmosis_cl_tick_changes (chain_id, hour);
