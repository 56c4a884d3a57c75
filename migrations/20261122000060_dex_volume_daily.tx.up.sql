-- Daily roll-ups of the dex_volume job's hourly tables (the same job keeps
-- them, in the transaction that rewrites the hours): the sums of
-- osmosis_pool_volume_hourly and osmosis_asset_volume_hourly per UTC day, so
-- all-time and multi-day totals read a row per day instead of 24.
CREATE TABLE osmosis_pool_volume_daily (
    chain_id   text        NOT NULL,
    pool_id    bigint      NOT NULL,
    day        timestamptz NOT NULL,  -- 00:00 UTC
    volume_usd numeric     NOT NULL,  -- sum of the day's osmosis_pool_volume_hourly
    PRIMARY KEY (chain_id, day, pool_id)
);
--bun:split
CREATE TABLE osmosis_asset_volume_daily (
    chain_id   text        NOT NULL,
    denom      text        NOT NULL,
    day        timestamptz NOT NULL,  -- 00:00 UTC
    volume_usd numeric     NOT NULL,  -- sum of the day's osmosis_asset_volume_hourly
    PRIMARY KEY (chain_id, day, denom)
);
--bun:split
-- Existing hours are rolled up once here; the job keeps the days from then on.
INSERT INTO osmosis_pool_volume_daily (chain_id, pool_id, day, volume_usd)
SELECT chain_id, pool_id, date_trunc('day', hour, 'UTC'), sum(volume_usd)
FROM osmosis_pool_volume_hourly GROUP BY 1, 2, 3;
--bun:split
INSERT INTO osmosis_asset_volume_daily (chain_id, denom, day, volume_usd)
SELECT chain_id, denom, date_trunc('day', hour, 'UTC'), sum(volume_usd)
FROM osmosis_asset_volume_hourly GROUP BY 1, 2, 3;
--bun:split
-- The last hours of all pools or denoms (the 24-hour windows, today's hours
-- after the daily sums) are one range scan.
CREATE INDEX osmosis_pool_volume_hourly_hour_idx ON osmosis_pool_volume_hourly (chain_id, hour);
--bun:split
CREATE INDEX osmosis_asset_volume_hourly_hour_idx ON osmosis_asset_volume_hourly (chain_id, hour);
