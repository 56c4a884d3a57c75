-- Each validator's bond status at every state snapshot of a dYdX chain
-- (state_snapshots kind 'validator': the staking module's own answer), built
-- by the perp_trading job. A validator whose latest status at or before a
-- time is not BOND_STATUS_BONDED (jailed, or out of the active set) holds no
-- bonded stake then; without a snapshot every validator counts as bonded.
CREATE TABLE perp_validator_status (
    chain_id   text        NOT NULL,
    validator  text        NOT NULL,  -- operator address
    height     bigint      NOT NULL,
    time       timestamptz NOT NULL,
    bonded     boolean     NOT NULL,
    jailed     boolean     NOT NULL,
    PRIMARY KEY (chain_id, validator, height)
);

--bun:split

UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'perp_trading';
