DROP TABLE IF EXISTS osmosis_staking_daily;
