-- A chain indexed from a later height than its initial one imports the
-- node's bank balances at the height before its first (the state at H-1)
-- instead of the genesis: every holder of every denom with a supply, read
-- page by page (DenomOwners) into a staging table whose progress survives
-- a crash, then moved into balance_changes (height 0, tx_index -3) in the
-- transaction of the first batch.
CREATE TABLE state_import_progress (
    chain_id  text    NOT NULL,
    height    bigint  NOT NULL,   -- the state's height (first indexed height - 1)
    denom     text    NOT NULL,
    next_key  bytea,              -- the next page's key; NULL before the first page
    done      boolean NOT NULL DEFAULT false,
    rows      bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (chain_id, height, denom)
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

-- NULL: imported from the genesis; else the height of the state imported.
ALTER TABLE genesis_imports ADD COLUMN state_height bigint;
