DROP TABLE IF EXISTS osmosis_asset_state_hourly;
