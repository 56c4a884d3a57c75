-- Every pool's USD liquidity at the end of each hour (the dex_liquidity
-- job keeps it, in the transaction that rewrites the reserves; its version
-- 2 builds it): a row per hour for every pool with a reserve by then, so an
-- answer that values every pool at a time reads the hour's rows instead of
-- a probe per pool and denom and per denom.
CREATE TABLE osmosis_pool_liquidity_hourly (
    chain_id      text        NOT NULL,
    hour          timestamptz NOT NULL,
    pool_id       bigint      NOT NULL,
    liquidity_usd numeric     NOT NULL,
    PRIMARY KEY (chain_id, hour, pool_id)
);
