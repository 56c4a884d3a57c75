-- The initialized ticks of the concentrated-liquidity pools at the height
-- before a late start, for nodes that do not serve the positions (a store
-- read of a past height): as LiquidityNetInDirection lists them, and each
-- one's record (TickInfo), whose gross liquidity tells how long it stays
-- initialized as positions leave. Valid once state_imports records their
-- import (parts /osmosis.concentratedliquidity.v1beta1.Query/LiquidityNetInDirection
-- and /store/concentratedliquidity/key).
CREATE TABLE osmosis_opening_cl_ticks (
    chain_id      text    NOT NULL,
    height        bigint  NOT NULL,  -- the state's height (first indexed height - 1)
    pool_id       bigint  NOT NULL,
    tick          bigint  NOT NULL,
    liquidity_net numeric NOT NULL,
    PRIMARY KEY (chain_id, height, pool_id, tick)
);

--bun:split

CREATE TABLE osmosis_opening_cl_tick_info (
    chain_id        text    NOT NULL,
    height          bigint  NOT NULL,
    pool_id         bigint  NOT NULL,
    tick            bigint  NOT NULL,
    liquidity_gross numeric NOT NULL CHECK (liquidity_gross > 0),
    liquidity_net   numeric NOT NULL,
    PRIMARY KEY (chain_id, height, pool_id, tick)
);
