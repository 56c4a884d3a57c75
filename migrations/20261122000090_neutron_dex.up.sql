-- Neutron x/dex TickUpdate events (chain-events.md §9), one row each, from
-- successful txs (tx_index >= 0) and from the block (limit-order expiry,
-- tx_index -1). reserves = the maker denom's reserves at tick_index (taker
-- to maker) after the update, of the pool with that fee or of the limit
-- order tranche; swap_in / swap_out = what a taker swapped against it
-- (in: the other denom, out: the maker denom).
CREATE TABLE neutron_dex_tick_updates (
    chain_id     text        NOT NULL,
    height       bigint      NOT NULL,
    tx_index     integer     NOT NULL,
    event_index  integer     NOT NULL,
    tx_hash      text        NOT NULL,  -- '' for block events
    time         timestamptz NOT NULL,
    token0       text        NOT NULL,
    token1       text        NOT NULL,
    maker_denom  text        NOT NULL,
    tick_index   bigint      NOT NULL,
    fee          bigint,                -- pools
    tranche_key  text        NOT NULL,  -- limit orders ('' for pools)
    reserves     numeric     NOT NULL,
    swap_in      numeric,
    swap_out     numeric,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);
