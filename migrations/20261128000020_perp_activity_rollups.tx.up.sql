-- Per-bucket trader roll-ups kept by the perp_activity_buckets job as it
-- adds heights, so the activity endpoints read a window's buckets instead
-- of counting distinct traders over the window's hours on every request
-- (distinct counts do not add up across buckets). They replace
-- perp_trader_hourly, which only those endpoints read.
--
-- The fills of each trader in each bucket of every resolution the
-- endpoints offer (resolution is a date_trunc unit: hour, day, week,
-- month; buckets in UTC): the rows a touched bucket is counted from.
CREATE TABLE perp_trader_buckets (
    chain_id   text        NOT NULL,
    resolution text        NOT NULL,
    bucket     timestamptz NOT NULL,
    address    text        NOT NULL,
    fills      bigint      NOT NULL,
    PRIMARY KEY (chain_id, resolution, bucket, address)
);

--bun:split

-- Per bucket: the traders with a fill in it, those with at least 10 and
-- 100, and those whose first fill fell in it.
CREATE TABLE perp_activity_buckets (
    chain_id     text        NOT NULL,
    resolution   text        NOT NULL,
    bucket       timestamptz NOT NULL,
    traders      bigint      NOT NULL,
    at_least_10  bigint      NOT NULL,
    at_least_100 bigint      NOT NULL,
    new_traders  bigint      NOT NULL,
    PRIMARY KEY (chain_id, resolution, bucket)
);

--bun:split

-- Per weekly cohort (the ISO week, UTC, of the traders' first fill) and
-- week after it (1 to 4): the cohort's traders with a fill in that week.
CREATE TABLE perp_retention_weeks (
    chain_id    text        NOT NULL,
    cohort      timestamptz NOT NULL,
    weeks_after smallint    NOT NULL,
    traders     bigint      NOT NULL,
    PRIMARY KEY (chain_id, cohort, weeks_after)
);

--bun:split

-- The all-time maker and taker volumes of each trader, for
-- /trading/traders_ranking (filled by the perp_traders job, whose new
-- version rebuilds it).
ALTER TABLE perp_traders
    ADD COLUMN all_time_maker_volume_usdc numeric NOT NULL DEFAULT 0,
    ADD COLUMN all_time_taker_volume_usdc numeric NOT NULL DEFAULT 0;

--bun:split

DROP TABLE perp_trader_hourly;

--bun:split

DELETE FROM aggregator_jobs WHERE name = 'perp_trader_hourly';
