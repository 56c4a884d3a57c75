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

-- Hourly close USD price per denom (aggregator job "dex_prices").
CREATE TABLE osmosis_asset_prices (
    chain_id  text        NOT NULL,
    denom     text        NOT NULL,
    hour      timestamptz NOT NULL,
    price_usd numeric     NOT NULL,  -- USD per display unit
    PRIMARY KEY (chain_id, denom, hour)
);

--bun:split

-- Last execution price of each pool direction (state of the "dex_prices" job).
CREATE TABLE osmosis_pool_last_prices (
    chain_id  text    NOT NULL,
    pool_id   bigint  NOT NULL,
    base      text    NOT NULL,
    quote     text    NOT NULL,
    height    bigint  NOT NULL,
    price     numeric NOT NULL,  -- quote base units per base base unit
    PRIMARY KEY (chain_id, pool_id, base, quote)
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
