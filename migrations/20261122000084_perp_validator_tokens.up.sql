-- Report table of the perp_trading job: each validator's tokens (base
-- units of NATIVE) at the end of every UTC day they changed: its genesis
-- self-delegation or creation, plus delegations, minus unbondings,
-- redelegations moved between validators. Slashes are not events with
-- amounts and are not counted.
CREATE TABLE perp_validator_tokens_daily (
    chain_id  text        NOT NULL,
    validator text        NOT NULL,
    day       timestamptz NOT NULL,
    tokens    numeric     NOT NULL,
    PRIMARY KEY (chain_id, validator, day)
);
