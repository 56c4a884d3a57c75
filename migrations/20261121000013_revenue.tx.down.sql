DROP TABLE IF EXISTS osmosis_revenue_daily;
