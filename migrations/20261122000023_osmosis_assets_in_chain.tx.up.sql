-- USD value of the priced assets on the dex chain at the end of each UTC
-- day (dex_assets job): each denom's total supply at the day's last indexed
-- block at the denom's last hourly close of the day.
CREATE TABLE osmosis_assets_in_chain_daily (
    chain_id  text        NOT NULL,
    day       timestamptz NOT NULL,
    height    bigint      NOT NULL,  -- last indexed height of the day
    value_usd numeric     NOT NULL,
    PRIMARY KEY (chain_id, day)
);
