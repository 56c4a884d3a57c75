DROP TABLE IF EXISTS perp_liquidations;

--bun:split

ALTER TABLE dydx_fills DROP COLUMN IF EXISTS is_buy, DROP COLUMN IF EXISTS insurance_delta;
