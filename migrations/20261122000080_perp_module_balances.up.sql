-- Report table of the perp_trading job: the NATIVE balance (base units) of
-- each treasury module account at the end of every UTC day its balance
-- changed (from the genesis balances and balance_changes).
CREATE TABLE perp_module_balances_daily (
    chain_id text        NOT NULL,
    account  text        NOT NULL,  -- module name: community_treasury, community_vester, rewards_treasury, rewards_vester
    day      timestamptz NOT NULL,
    balance  numeric     NOT NULL,
    PRIMARY KEY (chain_id, account, day)
);
