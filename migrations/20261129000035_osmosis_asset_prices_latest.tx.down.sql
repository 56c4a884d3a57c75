DROP TABLE IF EXISTS osmosis_asset_prices_latest;
