DROP TABLE IF EXISTS osmosis_pair_candles;
--bun:split
DROP TABLE IF EXISTS osmosis_asset_candles;
