DROP TABLE IF EXISTS osmosis_pool_liquidity_daily;
--bun:split
DROP TABLE IF EXISTS osmosis_pool_reserves_hourly;
