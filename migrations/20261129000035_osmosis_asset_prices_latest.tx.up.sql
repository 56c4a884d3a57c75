-- Each denom's latest close of osmosis_asset_prices (dex_prices keeps it,
-- in the same transaction): the prices now are a read of this table, and
-- it lists the denoms a read at an earlier time probes, instead of a skip
-- scan of the hourly table. Filled here from the hourly rows (one pass, in
-- key order), so that no job rebuilds.
CREATE TABLE osmosis_asset_prices_latest (
    chain_id  text        NOT NULL,
    denom     text        NOT NULL,
    hour      timestamptz NOT NULL,  -- the latest hour of osmosis_asset_prices for the denom
    price_usd numeric     NOT NULL,
    PRIMARY KEY (chain_id, denom)
);

--bun:split

CREATE INDEX osmosis_asset_prices_latest_hour ON osmosis_asset_prices_latest (chain_id, hour);

--bun:split

INSERT INTO osmosis_asset_prices_latest (chain_id, denom, hour, price_usd)
SELECT DISTINCT ON (chain_id, denom) chain_id, denom, hour, price_usd
FROM osmosis_asset_prices ORDER BY chain_id, denom, hour DESC;
