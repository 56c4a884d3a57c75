DROP TABLE IF EXISTS osmosis_asset_volume_daily;
--bun:split
DROP TABLE IF EXISTS osmosis_pool_volume_daily;
