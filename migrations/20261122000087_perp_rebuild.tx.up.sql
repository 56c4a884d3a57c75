-- The perp_trading job gained report tables after it may have run: its
-- watermark goes back to 0, so the next run rebuilds every report from the
-- indexed data (a dYdX chain indexed before its adapter wrote the genesis
-- catalogs and staking rows also needs `chainlens index --reset`).
UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'perp_trading';
