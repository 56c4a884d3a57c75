DROP INDEX IF EXISTS osmosis_asset_volume_hourly_hour_idx;
--bun:split
DROP INDEX IF EXISTS osmosis_pool_volume_hourly_hour_idx;
--bun:split
DROP TABLE IF EXISTS osmosis_asset_volume_daily;
--bun:split
DROP TABLE IF EXISTS osmosis_pool_volume_daily;
