ALTER TABLE perp_buystake_hourly DROP COLUMN IF EXISTS usdc_in;
