-- Each wallet's activity over the 7 UTC days ending osmosis_wallet_7d_end.day
-- (dex_activity job): what /activity/active_whales ranks, kept so an answer
-- reads its page by an index instead of summing every wallet's last 7 days.
CREATE TABLE osmosis_wallet_7d (
    chain_id    text    NOT NULL,
    address     text    NOT NULL,
    trading_usd numeric NOT NULL,
    lp_usd      numeric NOT NULL,
    staking_usd numeric NOT NULL,
    total_usd   numeric NOT NULL,  -- trading + lp + staking
    PRIMARY KEY (chain_id, address)
);

--bun:split

-- One ranking index per order of the endpoint.
CREATE INDEX osmosis_wallet_7d_total_idx ON osmosis_wallet_7d (chain_id, total_usd DESC, address);

--bun:split

CREATE INDEX osmosis_wallet_7d_trading_idx ON osmosis_wallet_7d (chain_id, trading_usd DESC, address);

--bun:split

CREATE INDEX osmosis_wallet_7d_lp_idx ON osmosis_wallet_7d (chain_id, lp_usd DESC, address);

--bun:split

CREATE INDEX osmosis_wallet_7d_staking_idx ON osmosis_wallet_7d (chain_id, staking_usd DESC, address);

--bun:split

-- The last day of the window osmosis_wallet_7d holds.
CREATE TABLE osmosis_wallet_7d_end (
    chain_id text        PRIMARY KEY,
    day      timestamptz NOT NULL
);
