DROP TABLE IF EXISTS osmosis_pool_reserves_latest;
