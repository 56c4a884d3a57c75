DROP TABLE IF EXISTS osmosis_asset_volume_hourly;
--bun:split
DROP TABLE IF EXISTS osmosis_asset_prices;
--bun:split
DROP TABLE IF EXISTS osmosis_price_state;
--bun:split
DROP TABLE IF EXISTS osmosis_pair_last_swaps;
--bun:split
DROP TABLE IF EXISTS osmosis_cl_positions;
--bun:split
DROP TABLE IF EXISTS osmosis_pool_liquidity;
--bun:split
DROP TABLE IF EXISTS osmosis_swaps;
--bun:split
DROP TABLE IF EXISTS osmosis_pools;
