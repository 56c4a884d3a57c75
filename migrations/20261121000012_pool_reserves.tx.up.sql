-- Osmosis pool reserves at the end of every hour in which they changed, and
-- each pool's USD liquidity at the end of every day (dex_liquidity job).
CREATE TABLE osmosis_pool_reserves_hourly (
    chain_id text        NOT NULL,
    pool_id  bigint      NOT NULL,
    denom    text        NOT NULL,
    hour     timestamptz NOT NULL,
    amount   numeric     NOT NULL,  -- base units at the end of the hour
    PRIMARY KEY (chain_id, pool_id, denom, hour)
);
--bun:split
CREATE TABLE osmosis_pool_liquidity_daily (
    chain_id      text        NOT NULL,
    pool_id       bigint      NOT NULL,
    day           timestamptz NOT NULL,
    liquidity_usd numeric     NOT NULL,  -- reserves at the end of the day at that day's last prices
    PRIMARY KEY (chain_id, pool_id, day)
);
