-- USDC the buy-and-stake programme address received from other accounts
-- (deposits into the programme; not the staking rewards it withdrew), per
-- hour, in base units. The perp_trading job rebuilds its reports once to
-- fill it (as 20261122000097 did).
ALTER TABLE perp_buystake_hourly ADD COLUMN usdc_in numeric NOT NULL DEFAULT 0;

--bun:split

UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'perp_trading';
