DROP TABLE IF EXISTS osmosis_pool_liquidity_hourly;
