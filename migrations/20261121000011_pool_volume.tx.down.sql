DROP TABLE IF EXISTS osmosis_pool_volume_hourly;
