-- perp_buystake_hourly is new: the perp_trading job rebuilds its reports
-- from the indexed data once (as 20261122000087 did).
UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'perp_trading';
