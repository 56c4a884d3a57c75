DROP TABLE IF EXISTS perp_trader_hourly;
