-- Staking rewards of the dex chain per UTC day (dex_staking job,
-- aggregator/dex), the base of GET /apr: what the distribution module
-- actually paid to validators and delegators in the staking denom (the
-- begin-block `rewards` events, community tax already taken, commission
-- included; block_rewards), the part of the day covered by indexed blocks,
-- and the bonded tokens of the latest staking_pool state snapshot at or
-- before the day's end (NULL when no snapshot is that old: no APR then).
CREATE TABLE osmosis_staking_daily (
    chain_id        text        NOT NULL,
    day             timestamptz NOT NULL,
    denom           text        NOT NULL,  -- staking denom
    rewards         numeric     NOT NULL,  -- base units (DecCoins), commission included
    commission      numeric     NOT NULL,  -- base units, the validators' part of rewards
    seconds         numeric     NOT NULL,  -- seconds of the day between the first indexed block and the indexed tip
    bonded          numeric,               -- base units, staking_pool snapshot
    snapshot_height bigint,                -- the staking_pool snapshot used
    PRIMARY KEY (chain_id, day)
);
