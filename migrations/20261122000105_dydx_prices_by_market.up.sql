-- The funding replay reads a market's oracle price in force at each tick
-- (the newest row at or below the tick's height). The primary key leads
-- with the height, so that lookup scanned back through every market's
-- updates until it met the market: long for a rarely updated market on a
-- mainnet-sized table. This index answers it with one probe.
CREATE INDEX dydx_prices_market_idx ON dydx_prices (chain_id, market_id, height);
