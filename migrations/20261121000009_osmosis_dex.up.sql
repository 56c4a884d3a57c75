-- Osmosis dex domain rows (chains/osmosis) and the dex report tables
-- (aggregator/dex) built from them.

-- One row per pool_created event: the pool and what its create message says.
CREATE TABLE osmosis_pools (
    chain_id    text        NOT NULL,
    height      bigint      NOT NULL,
    tx_index    integer     NOT NULL,
    event_index integer     NOT NULL,
    msg_index   integer     NOT NULL,
    time        timestamptz NOT NULL,
    pool_id     bigint      NOT NULL,
    type        text        NOT NULL,  -- balancer | stableswap | concentrated | cosmwasm | unknown
    creator     text        NOT NULL,
    denoms      text[]      NOT NULL,  -- in the create message's order
    swap_fee    numeric,               -- swap fee (spread factor for CL); NULL when unknown
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);

--bun:split

-- One row per token_swapped event (one per hop) of a successful tx or of
-- the block (epoch fee swaps). amount_in is net of the taker fee.
CREATE TABLE osmosis_swaps (
    chain_id    text        NOT NULL,
    height      bigint      NOT NULL,
    tx_index    integer     NOT NULL,  -- -1 for block-level events
    event_index integer     NOT NULL,
    msg_index   integer     NOT NULL,
    time        timestamptz NOT NULL,
    pool_id     bigint      NOT NULL,
    sender      text        NOT NULL,
    denom_in    text        NOT NULL,
    amount_in   numeric     NOT NULL,
    denom_out   text        NOT NULL,
    amount_out  numeric     NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX osmosis_swaps_pool_idx ON osmosis_swaps (chain_id, pool_id, height);

--bun:split

CREATE INDEX osmosis_swaps_time_idx ON osmosis_swaps (chain_id, time);

--bun:split

-- Liquidity moved into (+) or out of (-) gamm pools: creation deposits,
-- pool_joined and pool_exited. Concentrated-liquidity positions are not here yet.
CREATE TABLE osmosis_pool_liquidity (
    chain_id    text    NOT NULL,
    height      bigint  NOT NULL,
    tx_index    integer NOT NULL,
    event_index integer NOT NULL,
    coin_index  integer NOT NULL,
    msg_index   integer NOT NULL,
    pool_id     bigint  NOT NULL,
    kind        text    NOT NULL,  -- create | join | exit
    sender      text    NOT NULL,
    denom       text    NOT NULL,
    delta       numeric NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index, coin_index)
) PARTITION BY RANGE (height);

--bun:split

-- Concentrated-liquidity position changes: create_position (amounts > 0)
-- and withdraw_position (amounts and liquidity < 0, as the events give them).
-- add_to_position is a withdraw of the old position plus a create of the
-- new one, both present, so it has no row of its own. amount0/amount1 are
-- of the pool's token0/token1 (osmosis_pools.denoms[1], [2]).
CREATE TABLE osmosis_cl_positions (
    chain_id    text    NOT NULL,
    height      bigint  NOT NULL,
    tx_index    integer NOT NULL,
    event_index integer NOT NULL,
    msg_index   integer NOT NULL,
    pool_id     bigint  NOT NULL,
    position_id bigint  NOT NULL,
    kind        text    NOT NULL,  -- create | withdraw
    sender      text    NOT NULL,
    lower_tick  bigint  NOT NULL,
    upper_tick  bigint  NOT NULL,
    liquidity   numeric NOT NULL,
    amount0     numeric NOT NULL,
    amount1     numeric NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);

--bun:split

-- Hourly close USD price per denom (aggregator job "dex_prices").
CREATE TABLE osmosis_asset_prices (
    chain_id  text        NOT NULL,
    denom     text        NOT NULL,
    hour      timestamptz NOT NULL,
    price_usd numeric     NOT NULL,  -- USD per display unit
    PRIMARY KEY (chain_id, denom, hour)
);

--bun:split

-- State of the "dex_prices" job: the last swap of every pool and denom
-- pair (denom_a < denom_b) executed before the hour osmosis_price_state.hour.
CREATE TABLE osmosis_pair_last_swaps (
    chain_id    text        NOT NULL,
    pool_id     bigint      NOT NULL,
    denom_a     text        NOT NULL,
    denom_b     text        NOT NULL,
    height      bigint      NOT NULL,
    tx_index    integer     NOT NULL,
    event_index integer     NOT NULL,
    time        timestamptz NOT NULL,
    denom_in    text        NOT NULL,
    amount_in   numeric     NOT NULL,
    denom_out   text        NOT NULL,
    amount_out  numeric     NOT NULL,
    PRIMARY KEY (chain_id, pool_id, denom_a, denom_b)
);

--bun:split

CREATE TABLE osmosis_price_state (
    chain_id text PRIMARY KEY,
    hour     timestamptz NOT NULL  -- osmosis_pair_last_swaps holds the swaps before this hour
);

--bun:split

-- Hourly USD swap volume per denom (aggregator job "dex_volume").
CREATE TABLE osmosis_asset_volume_hourly (
    chain_id   text        NOT NULL,
    denom      text        NOT NULL,
    hour       timestamptz NOT NULL,
    volume_usd numeric     NOT NULL,
    PRIMARY KEY (chain_id, denom, hour)
);
