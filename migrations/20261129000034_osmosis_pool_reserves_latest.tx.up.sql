-- Each pool's latest reserve row of each denom (dex_liquidity keeps it with
-- osmosis_pool_reserves_hourly, in the same transaction): "the reserves
-- now" is a read of this table, and it lists the (pool, denom) keys that a
-- read at an earlier time probes, instead of a skip scan of the hourly
-- table. Filled here from the hourly rows (one pass, in key order), so that
-- no job rebuilds.
CREATE TABLE osmosis_pool_reserves_latest (
    chain_id text        NOT NULL,
    pool_id  bigint      NOT NULL,
    denom    text        NOT NULL,
    hour     timestamptz NOT NULL,  -- the latest hour of osmosis_pool_reserves_hourly for the key
    amount   numeric     NOT NULL,
    PRIMARY KEY (chain_id, pool_id, denom)
);

--bun:split

CREATE INDEX osmosis_pool_reserves_latest_hour ON osmosis_pool_reserves_latest (chain_id, hour);

--bun:split

INSERT INTO osmosis_pool_reserves_latest (chain_id, pool_id, denom, hour, amount)
SELECT DISTINCT ON (chain_id, pool_id, denom) chain_id, pool_id, denom, hour, amount
FROM osmosis_pool_reserves_hourly ORDER BY chain_id, pool_id, denom, hour DESC;
