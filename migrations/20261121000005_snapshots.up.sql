-- Periodic chain state snapshots taken through abci_query at a fixed height
-- (indexer/snapshot). A snapshot at height h is the state after block h;
-- time is the time of block h. Rewriting a snapshot deletes its
-- (chain_id, height) rows first, so writes are idempotent.
--
-- kind / key / denom / amount / data:
--   supply          ''                         denom  total supply
--   module_balance  module name                denom  balance; data {address}
--   staking_pool    bonded | not_bonded        bond denom
--   mint            inflation | annual_provisions  ''/mint denom; decimal
--   community_pool  ''                         denom  decimal (DecCoins)
--   validator       operator address           bond denom; amount = tokens;
--                   data {moniker, status, jailed, commission_rate, delegator_shares}
--   taken           a kind the node answered   ''     NULL; data {rows}
--   skipped         a kind the chain lacks     ''     NULL; data {reason}
-- Amounts are exact numerics (never floats); a taken kind without rows is
-- empty, not missing.
CREATE TABLE state_snapshots (
    chain_id  text        NOT NULL,
    height    bigint      NOT NULL,
    time      timestamptz NOT NULL,
    kind      text        NOT NULL,
    key       text        NOT NULL,
    denom     text        NOT NULL,
    amount    numeric,
    data      jsonb,
    PRIMARY KEY (chain_id, height, kind, key, denom)
);

--bun:split

CREATE INDEX state_snapshots_kind_idx ON state_snapshots (chain_id, kind, height);

--bun:split

-- "Latest snapshot of kind K at or before time T" is one backward probe of
-- the taken markers, then the primary key for the rows at that height:
--   SELECT height FROM state_snapshots
--    WHERE chain_id = $1 AND kind = 'taken' AND key = $K AND time <= $T
--    ORDER BY time DESC, height DESC LIMIT 1;
--   SELECT ... FROM state_snapshots WHERE chain_id = $1 AND height = $h AND kind = $K;
CREATE INDEX state_snapshots_taken_idx ON state_snapshots (chain_id, key, time, height) WHERE kind = 'taken';
