DROP TABLE IF EXISTS osmosis_traders_30d;
