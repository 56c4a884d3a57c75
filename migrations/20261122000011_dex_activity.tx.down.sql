DROP TABLE IF EXISTS osmosis_pool_flow_daily;
--bun:split
DROP TABLE IF EXISTS osmosis_wallet_daily;
