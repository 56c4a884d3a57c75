-- Rewards each address received per UTC day, denom and source
-- (dex_rewards_received job, aggregator/dex), base units:
--   cl       spread rewards and incentives collected from the address's
--            concentrated-liquidity positions (osmosis_cl_rewards, owner =
--            the position's creator);
--   gamm     incentives-module gauge distributions to the address
--            (`distribution` events: lock rewards of classic pool shares,
--            superfluid included);
--   staking  staking rewards withdrawn to the address: as delegator, or as
--            the withdraw address a delegator set (withdraw_rewards,
--            staking_events; set_withdraw_address events).
CREATE TABLE osmosis_rewards_received_daily (
    chain_id text        NOT NULL,
    address  text        NOT NULL,
    denom    text        NOT NULL,
    day      timestamptz NOT NULL,
    source   text        NOT NULL,  -- cl | gamm | staking
    amount   numeric     NOT NULL,
    PRIMARY KEY (chain_id, address, denom, day, source)
);

--bun:split

CREATE INDEX osmosis_rewards_received_daily_day_idx ON osmosis_rewards_received_daily (chain_id, day);
