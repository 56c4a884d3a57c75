-- What the liquidity providers of each Osmosis pool earned per hour
-- (dex_pool_rewards job, aggregator/dex), the base of the pools APR
-- endpoints, in USD at the hourly closes of osmosis_asset_prices:
-- swap fees (the pool's USD volume × its swap fee or spread factor) and
-- incentives paid into a concentrated-liquidity pool's incentives account
-- by the incentives module, split into native (in the staking denom) and
-- boost (any other denom); and the staking rewards of the pool's
-- superfluid-staked shares (withdrawn by the superfluid intermediary accounts
-- of its share denom).
CREATE TABLE osmosis_pool_rewards_hourly (
    chain_id       text        NOT NULL,
    pool_id        bigint      NOT NULL,
    hour           timestamptz NOT NULL,
    fees_usd       numeric     NOT NULL,
    native_usd     numeric     NOT NULL,
    boost_usd      numeric     NOT NULL,
    superfluid_usd numeric     NOT NULL,
    PRIMARY KEY (chain_id, pool_id, hour)
);

--bun:split

-- Payments of the incentives module to any other account (the gauge
-- distributions to lock owners, which no event ties to a pool) per hour
-- (dex_pool_rewards job): while there are any, the incentives of classic
-- pools are unknown.
CREATE TABLE osmosis_lock_rewards_hourly (
    chain_id   text        NOT NULL,
    hour       timestamptz NOT NULL,
    payments   integer     NOT NULL,
    PRIMARY KEY (chain_id, hour)
);

--bun:split

-- Concentrated-liquidity pools: tick spacing (from the create message) and
-- incentives account (dex_pool_rewards job).
CREATE TABLE osmosis_cl_pools (
    chain_id           text   NOT NULL,
    pool_id            bigint NOT NULL,
    tick_spacing       bigint NOT NULL,
    incentives_address text   NOT NULL,
    PRIMARY KEY (chain_id, pool_id)
);

--bun:split

-- Denoms that are superfluid assets (set_superfluid_asset events not undone
-- by a later remove_superfluid_asset; dex_pool_rewards job).
CREATE TABLE osmosis_superfluid_assets (
    chain_id text   NOT NULL,
    denom    text   NOT NULL,
    height   bigint NOT NULL,
    PRIMARY KEY (chain_id, denom)
);

--bun:split

-- Superfluid-staked locks and the shares they stake (superfluid_delegate,
-- superfluid_increase_delegation, superfluid_undelegate and
-- superfluid_undelegate_and_unbond_lock events; dex_pool_rewards job), and
-- the intermediary accounts (denom, validator) that stake for them.
CREATE TABLE osmosis_superfluid_locks (
    chain_id  text    NOT NULL,
    lock_id   bigint  NOT NULL,
    owner     text    NOT NULL,  -- of the lock (its lock_tokens event)
    denom     text    NOT NULL,
    validator text    NOT NULL,
    shares    numeric NOT NULL,
    PRIMARY KEY (chain_id, lock_id)
);

--bun:split

CREATE TABLE osmosis_superfluid_intermediaries (
    chain_id  text NOT NULL,
    address   text NOT NULL,
    denom     text NOT NULL,
    validator text NOT NULL,
    PRIMARY KEY (chain_id, address)
);
