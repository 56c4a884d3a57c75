DROP TABLE IF EXISTS perp_revenue_daily;

--bun:split

DROP TABLE IF EXISTS dydx_native_token;
