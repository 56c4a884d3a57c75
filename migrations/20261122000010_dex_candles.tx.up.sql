-- OHLC candles of the Osmosis dex (dex_candles job) at every bar size of the
-- chart endpoints (tf, minutes): 1-minute bars from the swaps, coarser bars
-- rolled up from finer ones. Weekly bars start on ISO Monday, 43800-minute
-- bars on the first of the calendar month (UTC).

-- USD price of one display unit of a denom, and its USD swap volume.
CREATE TABLE osmosis_asset_candles (
    chain_id   text        NOT NULL,
    denom      text        NOT NULL,
    tf         integer     NOT NULL,  -- minutes per bar
    bucket     timestamptz NOT NULL,  -- bar start
    open       numeric     NOT NULL,
    high       numeric     NOT NULL,
    low        numeric     NOT NULL,
    close      numeric     NOT NULL,
    volume_usd numeric     NOT NULL,
    PRIMARY KEY (chain_id, tf, denom, bucket)  -- a chart is one range scan; all denoms of one size too
);
--bun:split
-- The job's recompute-from-an-hour deletes and roll-ups.
CREATE INDEX osmosis_asset_candles_bucket_idx ON osmosis_asset_candles (chain_id, tf, bucket);
--bun:split
-- Execution price of a pool's pair: display units of quote per display unit
-- of base (both directions are stored; each row counts every hop between
-- the two denoms), and the amounts traded.
CREATE TABLE osmosis_pair_candles (
    chain_id     text        NOT NULL,
    pool_id      bigint      NOT NULL,
    base         text        NOT NULL,
    quote        text        NOT NULL,
    tf           integer     NOT NULL,
    bucket       timestamptz NOT NULL,
    open         numeric     NOT NULL,
    high         numeric     NOT NULL,
    low          numeric     NOT NULL,
    close        numeric     NOT NULL,
    base_amount  numeric     NOT NULL,  -- base units of base traded in the bar
    quote_amount numeric     NOT NULL,  -- base units of quote traded in the bar
    volume_usd   numeric     NOT NULL,  -- USD value of the bar's hops (as osmosis_pool_volume_hourly)
    PRIMARY KEY (chain_id, tf, pool_id, base, quote, bucket)
);
--bun:split
CREATE INDEX osmosis_pair_candles_bucket_idx ON osmosis_pair_candles (chain_id, tf, bucket);
