-- Every pool's USD swap volume summed per UTC day, and the running
-- all-time sum through that day (the dex_volume job, version 2, which
-- fills it on its rebuild): /trading_metrics' all-time volume reads one
-- row instead of summing every pool's every day, a cost that grew with
-- history.
CREATE TABLE osmosis_volume_daily_totals (
    chain_id       text        NOT NULL,
    day            timestamptz NOT NULL,  -- 00:00 UTC
    volume_usd     numeric     NOT NULL,  -- the day's osmosis_pool_volume_daily summed
    cumulative_usd numeric     NOT NULL,  -- volume_usd of this day and every day before
    PRIMARY KEY (chain_id, day)
);
