DROP TABLE IF EXISTS perp_buystake_hourly;
