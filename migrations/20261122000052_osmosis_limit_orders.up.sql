-- Order-book limit orders: the decoded events (chains/osmosis) and the
-- order report of the dex_limit_orders job (aggregator/dex).

-- placeLimit, cancelLimit and limitClaimed events of the CosmWasm order
-- book (chain-events.md §5.6) in successful txs.
CREATE TABLE osmosis_orderbook_events (
    chain_id        text    NOT NULL,
    height          bigint  NOT NULL,
    tx_index        integer NOT NULL,
    event_index     integer NOT NULL,
    msg_index       integer NOT NULL,
    contract        text    NOT NULL,  -- the order book's contract address
    kind            text    NOT NULL,  -- place | cancel | claim
    owner           text    NOT NULL,
    tick_id         bigint  NOT NULL,
    order_id        bigint  NOT NULL,
    order_direction text    NOT NULL,  -- bid | ask
    quantity        numeric NOT NULL,  -- placed quantity of order_denom (base units)
    amount_claimed  numeric NOT NULL,  -- claim: output paid out; 0 otherwise
    order_denom     text    NOT NULL,
    output_denom    text    NOT NULL,  -- '' on cancel events
    fully_claimed   boolean NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX osmosis_orderbook_events_order_idx ON osmosis_orderbook_events (chain_id, contract, order_id, height);

--bun:split

-- One row per limit order placed on an indexed height: its placement and
-- what happened to it since (dex_limit_orders job).
CREATE TABLE osmosis_limit_orders (
    chain_id         text        NOT NULL,
    contract         text        NOT NULL,
    order_id         bigint      NOT NULL,
    owner            text        NOT NULL,
    place_height     bigint      NOT NULL,
    place_time       timestamptz NOT NULL,
    place_tx_hash    text        NOT NULL,
    tick_id          bigint      NOT NULL,
    order_direction  text        NOT NULL,
    quantity         numeric     NOT NULL,
    claimed_quantity numeric     NOT NULL,  -- sum of amount_claimed
    order_denom      text        NOT NULL,
    output_denom     text        NOT NULL,
    status           text        NOT NULL,  -- open | fullyClaimed | cancelled
    closed_height    bigint,
    PRIMARY KEY (chain_id, contract, order_id)
);

--bun:split

CREATE INDEX osmosis_limit_orders_owner_idx ON osmosis_limit_orders (owner, chain_id, status, place_time);
