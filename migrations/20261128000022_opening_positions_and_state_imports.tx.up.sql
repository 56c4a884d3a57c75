-- The dYdX perpetual positions at the height before a late start (every
-- subaccount's, from the node's SubaccountAll at that height): the
-- positions report replays fills onto them. Staged page by page like the
-- bank state (state_import_progress, part opening/<query path>); valid
-- once state_imports records the import.
CREATE TABLE dydx_opening_positions (
    chain_id          text    NOT NULL,
    height            bigint  NOT NULL,  -- the state's height (first indexed height - 1)
    address           text    NOT NULL,  -- the subaccount's owner
    subaccount_number integer NOT NULL,
    perpetual_id      integer NOT NULL,
    quantums          numeric NOT NULL,  -- signed base quantums: long > 0, short < 0
    PRIMARY KEY (chain_id, height, address, subaccount_number, perpetual_id)
);

--bun:split

-- What a late start imported of the state at the height before its first
-- indexed height, per part: bank (balances), staking (delegations), or an
-- adapter's opening query (its path), written in the first batch's
-- transaction. A part the node did not serve (pruned state) has no row.
CREATE TABLE state_imports (
    chain_id    text        NOT NULL,
    part        text        NOT NULL,
    height      bigint      NOT NULL,
    rows        bigint      NOT NULL,
    imported_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, part)
);
