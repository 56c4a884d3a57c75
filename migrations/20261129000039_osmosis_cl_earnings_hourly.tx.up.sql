-- What one unit of in-range liquidity of each concentrated-liquidity pool
-- earned per hour (the dex_cl_earnings job): each hour of
-- osmosis_pool_rewards_hourly over the pool's active liquidity at the
-- hour's end (its last osmosis_cl_state_hourly row at or before the hour),
-- in units of 10^-80 USD truncated toward zero, with that tick. A position's
-- window earnings per unit of liquidity are the sums over the hours whose
-- tick is in its range: an indexed range per position, not the window's
-- hours and states of every pool read and divided by each answer.
CREATE TABLE osmosis_cl_earnings_hourly (
    chain_id   text        NOT NULL,
    pool_id    bigint      NOT NULL,
    hour       timestamptz NOT NULL,
    tick       bigint      NOT NULL,  -- the pool's tick at the hour's end
    fees       numeric     NOT NULL,  -- 10^-80 USD per unit of liquidity
    native     numeric     NOT NULL,
    boost      numeric     NOT NULL,
    PRIMARY KEY (chain_id, pool_id, hour)
);

--bun:split

-- The job rewrites the hours from its first new block's on: a range of this
-- index, not a scan of every pool's history.
CREATE INDEX osmosis_cl_earnings_hourly_hour_idx ON osmosis_cl_earnings_hourly (chain_id, hour);
