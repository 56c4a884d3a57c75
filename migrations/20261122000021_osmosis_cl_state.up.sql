-- What replaying concentrated-liquidity pools needs (chains/osmosis) and the
-- pools' replayed state (dex_cl_state job, aggregator/dex).

-- Whether a swap hop belongs to an exact-amount-out message (the hop is
-- then swapped as exact out); false for exact-in and block-level hops.
ALTER TABLE osmosis_swaps ADD COLUMN exact_out boolean NOT NULL DEFAULT false;

--bun:split

-- tokens_provided of the MsgCreatePosition of a create row ('' otherwise):
-- a pool's first position sets its initial price from them.
ALTER TABLE osmosis_cl_positions ADD COLUMN provided text NOT NULL DEFAULT '';

--bun:split

-- State of every concentrated-liquidity pool at the end of each hour in
-- which it changed (dex_cl_state job).
CREATE TABLE osmosis_cl_state_hourly (
    chain_id   text        NOT NULL,
    pool_id    bigint      NOT NULL,
    hour       timestamptz NOT NULL,
    sqrt_price numeric     NOT NULL,  -- 36 decimals
    tick       bigint      NOT NULL,
    liquidity  numeric     NOT NULL,  -- in range
    PRIMARY KEY (chain_id, pool_id, hour)
);

--bun:split

-- The initialized ticks of each pool with their net liquidity, at the end
-- of each hour in state_hourly (dex_cl_state job).
CREATE TABLE osmosis_cl_ticks_hourly (
    chain_id      text        NOT NULL,
    pool_id       bigint      NOT NULL,
    hour          timestamptz NOT NULL,
    tick            bigint      NOT NULL,
    liquidity_net   numeric     NOT NULL,
    liquidity_gross numeric     NOT NULL,
    PRIMARY KEY (chain_id, pool_id, hour, tick)
);
