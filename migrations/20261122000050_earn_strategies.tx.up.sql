-- Earn strategies (dex_earn job, aggregator/dex/earn.go), keyed by the
-- strategy id declared in config (earn.strategies).

-- One row per strategy at the height the job last reached.
CREATE TABLE earn_strategy_state (
    strategy     text        PRIMARY KEY,
    chain_id     text        NOT NULL,
    kind         text        NOT NULL,  -- lp
    height       bigint      NOT NULL,
    time         timestamptz NOT NULL,
    tvl_usd      numeric     NOT NULL,  -- sum of earn_strategy_assets.tvl_usd
    apr          numeric     NOT NULL,  -- percent
    share_denom  text        NOT NULL,  -- lp: gamm/pool/<id>
    total_shares numeric     NOT NULL   -- lp: supply of share_denom
);

--bun:split

-- The strategy's assets: amount in base units and its USD value.
CREATE TABLE earn_strategy_assets (
    strategy text    NOT NULL,
    denom    text    NOT NULL,
    amount   numeric NOT NULL,
    tvl_usd  numeric NOT NULL,
    PRIMARY KEY (strategy, denom)
);

--bun:split

-- What each address holds in the strategy (lp: shares of share_denom in
-- base units, bank-held plus locked in x/lockup); rows of zero are kept
-- for addresses that left.
CREATE TABLE earn_strategy_balances (
    strategy text    NOT NULL,
    address  text    NOT NULL,
    amount   numeric NOT NULL,
    height   bigint  NOT NULL,  -- height of the address's last change
    PRIMARY KEY (strategy, address)
);
