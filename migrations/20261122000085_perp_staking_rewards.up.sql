-- Report table of the perp_trading job: staking rewards per UTC day, what
-- the distribution module allocated to validators (block_rewards of kind
-- rewards, commission included), in USDC and in NATIVE base units.
CREATE TABLE perp_staking_rewards_daily (
    chain_id text        NOT NULL,
    day      timestamptz NOT NULL,
    usdc     numeric     NOT NULL,
    native   numeric     NOT NULL,
    PRIMARY KEY (chain_id, day)
);
