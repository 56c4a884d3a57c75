DROP TABLE IF EXISTS perp_open_interest_hourly;

--bun:split

DROP TABLE IF EXISTS perp_positions;

--bun:split

DROP TABLE IF EXISTS perp_price_hourly;

--bun:split

DROP TABLE IF EXISTS dydx_prices;

--bun:split

DROP TABLE IF EXISTS dydx_markets;
