-- The state at genesis of a cosmos chain indexed from its initial height:
-- its balances are balance_changes rows at height 0 (the bank genesis and
-- what InitChain moves without events), written in the same transaction as
-- the chain's first batch. A chain without a row here was indexed from a
-- later height: its balances before that height are unknown.
CREATE TABLE genesis_imports (
    chain_id       text        PRIMARY KEY,
    initial_height bigint      NOT NULL,
    genesis_time   timestamptz NOT NULL,
    balance_rows   integer     NOT NULL,
    imported_at    timestamptz NOT NULL DEFAULT now()
);
