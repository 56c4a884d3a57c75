-- osmosis_pool_rewards_hourly summed per pool and UTC day (the dex_pool_rewards
-- job keeps it, in the transaction that rewrites the hours; the job's version
-- 2 rebuilds it): the pools APRs' 7-day window reads the hours of its first
-- day and a row per later day instead of 168 hours a pool.
CREATE TABLE osmosis_pool_rewards_daily (
    chain_id       text        NOT NULL,
    pool_id        bigint      NOT NULL,
    day            timestamptz NOT NULL,  -- 00:00 UTC
    fees_usd       numeric     NOT NULL,
    native_usd     numeric     NOT NULL,
    boost_usd      numeric     NOT NULL,
    superfluid_usd numeric     NOT NULL,
    PRIMARY KEY (chain_id, day, pool_id)
);
