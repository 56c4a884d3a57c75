-- Jobs whose report rows changed meaning go back to watermark 0, so the
-- next run rebuilds them from the indexed data: dex2 (fills valued through
-- a denom's last USD-pegged fill, dex2_usd_prices), dex_activity (an
-- add_to_position counts what was added), liquid_staking (a cancelled
-- unbonding is an inflow) and perp_trading (rewards exclude moves between
-- treasury module accounts).
UPDATE aggregator_jobs SET watermark = 0 WHERE name IN ('dex2', 'dex_activity', 'liquid_staking', 'perp_trading');
