DROP TABLE perp_trader_markets;
