-- Osmosis chain revenue in USD per UTC day and source (dex_revenue job).
CREATE TABLE osmosis_revenue_daily (
    chain_id   text        NOT NULL,
    day        timestamptz NOT NULL,
    source     text        NOT NULL,  -- tx_fees | taker_fees | protorev
    amount_usd numeric     NOT NULL,
    PRIMARY KEY (chain_id, day, source)
);
