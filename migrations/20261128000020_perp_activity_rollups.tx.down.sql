CREATE TABLE perp_trader_hourly (
    chain_id text        NOT NULL,
    hour     timestamptz NOT NULL,
    address  text        NOT NULL,
    fills    bigint      NOT NULL,
    PRIMARY KEY (chain_id, hour, address)
);

--bun:split

ALTER TABLE perp_traders DROP COLUMN all_time_maker_volume_usdc, DROP COLUMN all_time_taker_volume_usdc;

--bun:split

DROP TABLE perp_retention_weeks;

--bun:split

DROP TABLE perp_activity_buckets;

--bun:split

DROP TABLE perp_trader_buckets;

--bun:split

-- perp_trader_hourly is rebuilt from the first height by its job.
DELETE FROM aggregator_jobs WHERE name = 'perp_activity_buckets';
