-- The block time at the stablecoin job's watermark, checked with its hash:
-- a chain indexed again with the same hashes but other times (a replayed
-- recording moved in time) rebuilds its reports too.
ALTER TABLE stablecoin_report_state ADD COLUMN block_time timestamptz;
