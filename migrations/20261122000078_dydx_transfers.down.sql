DROP TABLE IF EXISTS perp_deposits_hourly;

--bun:split

DROP TABLE IF EXISTS dydx_transfers;
