-- A chain indexed from a later height than its initial one imports the
-- node's state at the height before its first (the state at H-1) instead
-- of the genesis: every holder of every denom with a supply (DenomOwners)
-- and every validator's delegations, read page by page into staging
-- tables whose progress survives a crash, then moved into balance_changes
-- and staking_events (height 0, tx_index -3) in the transaction of the
-- first batch.
CREATE TABLE state_import_progress (
    chain_id  text    NOT NULL,
    height    bigint  NOT NULL,   -- the state's height (first indexed height - 1)
    part      text    NOT NULL,   -- a denom's holders, or staking/<valoper>: a validator's delegations
    next_key  bytea,              -- the next page's key; NULL before the first page
    done      boolean NOT NULL DEFAULT false,
    rows      bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (chain_id, height, part)
);

--bun:split

CREATE TABLE state_import_balances (
    chain_id text    NOT NULL,
    height   bigint  NOT NULL,
    denom    text    NOT NULL,
    address  text    NOT NULL,
    amount   numeric NOT NULL,
    PRIMARY KEY (chain_id, height, denom, address)
);

--bun:split

CREATE TABLE state_import_delegations (
    chain_id  text    NOT NULL,
    height    bigint  NOT NULL,
    validator text    NOT NULL,
    delegator text    NOT NULL,
    denom     text    NOT NULL,
    amount    numeric NOT NULL,  -- the delegation's tokens
    PRIMARY KEY (chain_id, height, validator, delegator)
);

--bun:split

-- NULL: imported from the genesis; else the height of the state imported.
ALTER TABLE genesis_imports ADD COLUMN state_height bigint;
