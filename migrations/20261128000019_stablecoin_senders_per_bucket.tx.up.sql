-- Distinct senders per token and bucket of each time_agg size (60 s to
-- 1 h, starting at multiples of the size since the epoch), kept by the
-- stablecoin job as it adds minutes: /stablecoins/active-senders/over-time
-- reads a window's buckets instead of counting a day of senders.
CREATE TABLE stablecoin_senders_bucket (
    chain_id text        NOT NULL,
    agg_s    integer     NOT NULL,
    bucket   timestamptz NOT NULL,
    token    text        NOT NULL,
    senders  bigint      NOT NULL,
    PRIMARY KEY (chain_id, agg_s, bucket, token)
);
