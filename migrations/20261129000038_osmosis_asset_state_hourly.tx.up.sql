-- Every denom's price and pooled amount at the end of each hour (the
-- dex_liquidity job keeps it with osmosis_pool_liquidity_hourly; its
-- version 3 builds it): a row per hour for every denom priced or pooled by
-- then, so an answer about every token at a few times reads those hours'
-- rows instead of a probe per denom and per pool and denom.
CREATE TABLE osmosis_asset_state_hourly (
    chain_id  text        NOT NULL,
    hour      timestamptz NOT NULL,
    denom     text        NOT NULL,
    price_usd numeric,              -- the latest close up to the hour's end (osmosis_asset_prices); null before the first
    reserves  numeric,              -- base units in the catalog's pools (osmosis_pool_reserves_hourly); null when in none
    PRIMARY KEY (chain_id, hour, denom)
);
