-- Perpetual fills of dYdX v4, from the `match` events of block_results
-- (chain-events.md §6.2): one row per side of every fill, liquidation fill
-- and deleveraging. Amounts are in quote quantums (USDC, 6 decimals) and
-- base quantums, as emitted.
CREATE TABLE dydx_fills (
    chain_id          text        NOT NULL,
    height            bigint      NOT NULL,
    tx_index          integer     NOT NULL,  -- -1 for block-level events
    event_index       integer     NOT NULL,
    role              text        NOT NULL,  -- taker | maker (the liquidated side is the taker)
    time              timestamptz NOT NULL,
    address           text        NOT NULL,  -- the subaccount's owner
    subaccount_number integer     NOT NULL,
    perpetual_id      integer     NOT NULL,
    size              numeric     NOT NULL,  -- base quantums filled (|taker perpetual delta|)
    notional          numeric     NOT NULL,  -- quote quantums (|maker quote delta + maker fees|)
    fee               numeric     NOT NULL,  -- this side's order fee, quote quantums (negative = rebate)
    is_liquidation    boolean     NOT NULL,
    is_deleverage     boolean     NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index, role)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX dydx_fills_address_idx ON dydx_fills (address, chain_id, time);

--bun:split

CREATE INDEX dydx_fills_time_idx ON dydx_fills (chain_id, time);
