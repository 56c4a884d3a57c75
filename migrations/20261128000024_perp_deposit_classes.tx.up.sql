-- Depositors per bucket kept by the perp_deposit_classes job as deposits
-- arrive, like the traders' activity roll-ups: each address's USDC
-- deposited per bucket of every resolution (hour, day, week, month; UTC),
-- and per bucket the depositors in each size class (small < 1,000 USDC
-- <= medium < 100,000 USDC <= large), which a run moves by what it
-- changes. /activity/user_distribution_by_deposits reads a window's
-- buckets instead of summing every address's hours per request. They
-- replace perp_deposits_hourly, which only that endpoint read.
CREATE TABLE perp_depositor_buckets (
    chain_id   text        NOT NULL,
    resolution text        NOT NULL,
    bucket     timestamptz NOT NULL,
    address    text        NOT NULL,
    usdc       numeric     NOT NULL,
    PRIMARY KEY (chain_id, resolution, bucket, address)
);

--bun:split

CREATE TABLE perp_deposit_classes (
    chain_id   text        NOT NULL,
    resolution text        NOT NULL,
    bucket     timestamptz NOT NULL,
    small      bigint      NOT NULL,
    medium     bigint      NOT NULL,
    large      bigint      NOT NULL,
    PRIMARY KEY (chain_id, resolution, bucket)
);

--bun:split

DROP TABLE perp_deposits_hourly;

--bun:split

DELETE FROM aggregator_jobs WHERE name = 'perp_deposits_hourly';
