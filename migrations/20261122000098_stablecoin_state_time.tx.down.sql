ALTER TABLE stablecoin_report_state DROP COLUMN IF EXISTS block_time;
