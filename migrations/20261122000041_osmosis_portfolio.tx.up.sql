-- What the portfolio endpoints read (dex_portfolio job, aggregator/dex),
-- valued at request time with osmosis_asset_prices, osmosis_pool_reserves_hourly
-- and osmosis_cl_state_hourly.

-- Every address's bank balance of every denom (LP shares gamm/pool/N
-- included) at the end of each hour in which it changed: the genesis rows
-- (height 0, at the genesis time) plus the indexed balance_changes.
CREATE TABLE osmosis_balances_hourly (
    chain_id text        NOT NULL,
    address  text        NOT NULL,
    denom    text        NOT NULL,
    hour     timestamptz NOT NULL,
    amount   numeric     NOT NULL,  -- base units at the end of the hour
    PRIMARY KEY (chain_id, address, denom, hour)
);

--bun:split

-- Total shares of each balancer/stableswap pool (the bank supply of
-- gamm/pool/N: the sum of every balance) at the end of each hour in which
-- it changed.
CREATE TABLE osmosis_pool_shares_hourly (
    chain_id     text        NOT NULL,
    pool_id      bigint      NOT NULL,
    hour         timestamptz NOT NULL,
    total_shares numeric     NOT NULL,
    PRIMARY KEY (chain_id, pool_id, hour)
);

--bun:split

-- Coins each address has locked in the lockup module (LP shares bonded for
-- incentives or superfluid staking) at the end of each hour in which they
-- changed: its transfers to the lockup module account minus the module's
-- transfers back to it (a lock's coins are held by the module).
CREATE TABLE osmosis_locked_hourly (
    chain_id text        NOT NULL,
    address  text        NOT NULL,
    denom    text        NOT NULL,
    hour     timestamptz NOT NULL,
    amount   numeric     NOT NULL,
    PRIMARY KEY (chain_id, address, denom, hour)
);

--bun:split

-- Liquidity of each concentrated-liquidity position at the end of each
-- hour in which it changed (0 once withdrawn), with its owner and range.
CREATE TABLE osmosis_cl_position_liquidity_hourly (
    chain_id    text        NOT NULL,
    position_id bigint      NOT NULL,
    hour        timestamptz NOT NULL,
    pool_id     bigint      NOT NULL,
    address     text        NOT NULL,
    lower_tick  bigint      NOT NULL,
    upper_tick  bigint      NOT NULL,
    liquidity   numeric     NOT NULL,  -- 18 decimals
    PRIMARY KEY (chain_id, position_id, hour)
);

--bun:split

CREATE INDEX osmosis_cl_position_liquidity_hourly_address_idx ON osmosis_cl_position_liquidity_hourly (chain_id, address, position_id, hour);
