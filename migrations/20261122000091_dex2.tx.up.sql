-- Report tables of the second dex chain group (Neutron x/dex), built by the
-- dex2 job (aggregator/dex2) from neutron_dex_tick_updates.

-- Every pair that ever had liquidity: its first and last tick update.
CREATE TABLE dex2_pairs (
    chain_id        text        NOT NULL,
    token0          text        NOT NULL,
    token1          text        NOT NULL,
    created_height  bigint      NOT NULL,
    created_time    timestamptz NOT NULL,
    updated_height  bigint      NOT NULL,
    updated_time    timestamptz NOT NULL,
    PRIMARY KEY (chain_id, token0, token1)
);

--bun:split

-- Current reserves of every pool side (pool_key 'fee N') and limit-order
-- tranche (pool_key = tranche key): the last tick update of each.
CREATE TABLE dex2_reserves (
    chain_id     text    NOT NULL,
    token0       text    NOT NULL,
    token1       text    NOT NULL,
    maker_denom  text    NOT NULL,
    tick_index   bigint  NOT NULL,  -- taker to maker
    pool_key     text    NOT NULL,
    reserves     numeric NOT NULL,
    height       bigint  NOT NULL,
    PRIMARY KEY (chain_id, token0, token1, maker_denom, tick_index, pool_key)
);

--bun:split

-- Every fill: a taker swapped taker_in of the other denom for taker_out of
-- maker_denom at tick_index (taker to maker). usd = the fill's value when
-- one side is a USD-pegged asset of the chain's config, else NULL.
CREATE TABLE dex2_fills (
    chain_id     text        NOT NULL,
    height       bigint      NOT NULL,
    tx_index     integer     NOT NULL,
    event_index  integer     NOT NULL,
    time         timestamptz NOT NULL,
    tx_hash      text        NOT NULL,
    token0       text        NOT NULL,
    token1       text        NOT NULL,
    maker_denom  text        NOT NULL,
    tick_index   bigint      NOT NULL,
    taker_in     numeric     NOT NULL,
    taker_out    numeric     NOT NULL,
    usd          numeric,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
);

--bun:split

CREATE INDEX dex2_fills_pair_idx ON dex2_fills (chain_id, token0, token1, time);

--bun:split

-- USD volume of the fills with a known value, per UTC day.
CREATE TABLE dex2_volume_daily (
    chain_id  text    NOT NULL,
    day       date    NOT NULL,
    usd       numeric NOT NULL,
    fills     bigint  NOT NULL,
    PRIMARY KEY (chain_id, day)
);
