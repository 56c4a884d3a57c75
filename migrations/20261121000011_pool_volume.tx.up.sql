-- USD swap volume of every Osmosis pool per hour (dex_volume job).
CREATE TABLE osmosis_pool_volume_hourly (
    chain_id   text        NOT NULL,
    pool_id    bigint      NOT NULL,
    hour       timestamptz NOT NULL,
    volume_usd numeric     NOT NULL,
    PRIMARY KEY (chain_id, pool_id, hour)
);
