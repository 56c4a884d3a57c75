DROP TABLE IF EXISTS perp_report_state;

--bun:split

DROP TABLE IF EXISTS perp_traders;

--bun:split

DROP TABLE IF EXISTS perp_trader_daily;

--bun:split

DROP TABLE IF EXISTS perp_market_hourly;

--bun:split

DROP TABLE IF EXISTS dydx_perpetuals;
