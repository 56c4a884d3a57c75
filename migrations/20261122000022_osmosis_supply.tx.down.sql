DROP TABLE IF EXISTS osmosis_supply;
