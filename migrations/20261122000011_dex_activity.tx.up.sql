-- Per-wallet and per-pool daily dex activity (dex_activity job), in USD at
-- the hourly closes of osmosis_asset_prices.
CREATE TABLE osmosis_wallet_daily (
    chain_id    text        NOT NULL,
    day         timestamptz NOT NULL,
    address     text        NOT NULL,
    swaps       integer     NOT NULL,  -- swap hops sent by the wallet (tx-level only)
    trading_usd numeric     NOT NULL,  -- value of those hops (as osmosis_pool_volume_hourly)
    lp_usd      numeric     NOT NULL,  -- liquidity added plus removed
    staking_usd numeric     NOT NULL,  -- delegated plus undelegated
    PRIMARY KEY (chain_id, day, address)
);
--bun:split
CREATE TABLE osmosis_pool_flow_daily (
    chain_id    text        NOT NULL,
    pool_id     bigint      NOT NULL,
    day         timestamptz NOT NULL,
    added_usd   numeric     NOT NULL,
    removed_usd numeric     NOT NULL,
    PRIMARY KEY (chain_id, pool_id, day)
);
--bun:split
CREATE INDEX osmosis_pool_flow_daily_day_idx ON osmosis_pool_flow_daily (chain_id, day);
