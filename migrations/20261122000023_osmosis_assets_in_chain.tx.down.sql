DROP TABLE IF EXISTS osmosis_assets_in_chain_daily;
