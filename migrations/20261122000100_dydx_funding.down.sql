DROP TABLE IF EXISTS perp_funding_ticks;
DROP TABLE IF EXISTS dydx_funding_epochs;
DROP TABLE IF EXISTS dydx_premium_votes;
DROP TABLE IF EXISTS dydx_funding_params;
