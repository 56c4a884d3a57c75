-- ATOM delegated by each liquid-staking provider's accounts at the day's
-- last state snapshot (kind delegation, taken for config
-- staking.providers), built by the liquid_staking job.
CREATE TABLE liquid_provider_daily (
    chain_id  text    NOT NULL,
    day       date    NOT NULL,
    provider  text    NOT NULL,
    amount    numeric NOT NULL,  -- bond denom base units
    height    bigint  NOT NULL,  -- the snapshot's height
    PRIMARY KEY (chain_id, day, provider)
);
