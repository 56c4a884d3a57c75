DROP TABLE IF EXISTS osmosis_cl_position_liquidity_hourly;

--bun:split

DROP TABLE IF EXISTS osmosis_pool_shares_hourly;

--bun:split

DROP TABLE IF EXISTS osmosis_locked_hourly;

--bun:split

DROP TABLE IF EXISTS osmosis_balances_hourly;
