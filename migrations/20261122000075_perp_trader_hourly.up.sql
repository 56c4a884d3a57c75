-- Per trader and UTC hour: the fills the trader took part in (perp_trading
-- job). Feeds the activity distributions and retention by bucket.
CREATE TABLE perp_trader_hourly (
    chain_id text        NOT NULL,
    hour     timestamptz NOT NULL,
    address  text        NOT NULL,
    fills    bigint      NOT NULL,
    PRIMARY KEY (chain_id, hour, address)
);
