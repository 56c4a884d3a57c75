-- Report table of the perp_trading job: trading rewards, the NATIVE the
-- rewards module's EndBlocker sends from the rewards_treasury module account
-- to traders (bank transfers, chain-events.md §6.3), per UTC day and
-- recipient, in base units.
CREATE TABLE perp_rewards_daily (
    chain_id text        NOT NULL,
    day      timestamptz NOT NULL,
    address  text        NOT NULL,
    amount   numeric     NOT NULL,
    PRIMARY KEY (chain_id, day, address)
);
