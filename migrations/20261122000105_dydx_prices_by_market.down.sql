DROP INDEX IF EXISTS dydx_prices_market_idx;
