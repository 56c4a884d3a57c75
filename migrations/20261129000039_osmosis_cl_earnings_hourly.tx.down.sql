DROP TABLE IF EXISTS osmosis_cl_earnings_hourly;
