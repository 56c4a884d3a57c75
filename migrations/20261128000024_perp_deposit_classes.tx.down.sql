CREATE TABLE perp_deposits_hourly (
    chain_id text        NOT NULL,
    hour     timestamptz NOT NULL,
    address  text        NOT NULL,
    usdc     numeric     NOT NULL,
    PRIMARY KEY (chain_id, hour, address)
);

--bun:split

DROP TABLE perp_deposit_classes;

--bun:split

DROP TABLE perp_depositor_buckets;

--bun:split

-- perp_deposits_hourly is rebuilt from the first height by its job.
DELETE FROM aggregator_jobs WHERE name = 'perp_deposit_classes';
