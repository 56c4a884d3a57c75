-- Concentrated-liquidity rewards and position replacements (chains/osmosis),
-- balancer weights and stableswap scaling factors of the pools, and the
-- position report of the dex_positions job (aggregator/dex).

-- Balancer weights or stableswap scaling factors from the create message,
-- one per coin of the initial deposit (same order as denoms); NULL for
-- concentrated-liquidity and CosmWasm pools.
ALTER TABLE osmosis_pools ADD COLUMN weights numeric[];

--bun:split

-- Coins moved for one position by collect_spread_rewards (kind spread) and
-- collect_incentives (kinds incentives, forfeit) events of successful txs.
CREATE TABLE osmosis_cl_rewards (
    chain_id    text    NOT NULL,
    height      bigint  NOT NULL,
    tx_index    integer NOT NULL,
    event_index integer NOT NULL,
    coin_index  integer NOT NULL,
    msg_index   integer NOT NULL,
    pool_id     bigint  NOT NULL,
    position_id bigint  NOT NULL,
    kind        text    NOT NULL,  -- spread | incentives | forfeit
    denom       text    NOT NULL,
    amount      numeric NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index, coin_index)
) PARTITION BY RANGE (height);

--bun:split

-- add_to_position events: position_id was withdrawn and replaced by
-- new_position_id (its create row in osmosis_cl_positions has the amounts).
CREATE TABLE osmosis_cl_adds (
    chain_id        text    NOT NULL,
    height          bigint  NOT NULL,
    tx_index        integer NOT NULL,
    event_index     integer NOT NULL,
    msg_index       integer NOT NULL,
    pool_id         bigint  NOT NULL,
    position_id     bigint  NOT NULL,
    new_position_id bigint  NOT NULL,
    sender          text    NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);

--bun:split

-- The action that created each position id (dex_positions job).
CREATE TABLE osmosis_position_principals (
    chain_id    text        NOT NULL,
    position_id bigint      NOT NULL,
    pool_id     bigint      NOT NULL,
    action      text        NOT NULL,  -- create_position | add_to_position
    address     text        NOT NULL,
    height      bigint      NOT NULL,
    tx_hash     text        NOT NULL,
    time        timestamptz NOT NULL,
    lower_tick  bigint      NOT NULL,
    upper_tick  bigint      NOT NULL,
    denom0      text        NOT NULL,
    amount0     numeric     NOT NULL,  -- base units deposited
    denom1      text        NOT NULL,
    amount1     numeric     NOT NULL,
    PRIMARY KEY (chain_id, position_id)
);

--bun:split

-- All-time rewards collected per position, kind and denom (dex_positions job).
CREATE TABLE osmosis_position_rewards (
    chain_id    text    NOT NULL,
    position_id bigint  NOT NULL,
    kind        text    NOT NULL,  -- spread | incentives | forfeit
    denom       text    NOT NULL,
    amount      numeric NOT NULL,  -- base units
    PRIMARY KEY (chain_id, position_id, kind, denom)
);
