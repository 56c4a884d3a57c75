-- The Osmosis pools and concentrated-liquidity positions at the height
-- before a late start (chains/osmosis, from the node at that height:
-- AllPools, and a read of the concentrated-liquidity store's positions):
-- the dex jobs start from them as from pools created and positions opened
-- before the first indexed block. Staged like the bank state
-- (state_import_progress, part opening/<query>); valid once state_imports
-- records the query's import.
CREATE TABLE osmosis_opening_pools (
    chain_id     text    NOT NULL,
    height       bigint  NOT NULL,  -- the state's height (first indexed height - 1)
    pool_id      bigint  NOT NULL,
    type         text    NOT NULL,  -- balancer | stableswap | concentrated | cosmwasm
    address      text    NOT NULL,  -- the pool's account (CosmWasm: its contract)
    denoms       text[]  NOT NULL,  -- balancer, stableswap: the pool's assets in its order; concentrated: token0, token1
    amounts      numeric[],         -- balancer, stableswap: the reserves, as denoms; NULL for other pools
    swap_fee     numeric,           -- swap fee (spread factor for CL); NULL for CosmWasm
    weights      numeric[],         -- balancer weights (as the create message gives them; as stored while being changed) or stableswap scaling factors, as denoms
    tick_spacing bigint,            -- concentrated only
    exit_fee     numeric,           -- balancer, stableswap only
    sqrt_price   numeric,           -- concentrated: the current sqrt price (36 decimals); NULL before its first position
    tick         bigint,            -- concentrated: the current tick; NULL before its first position
    liquidity    numeric,           -- concentrated: the liquidity in range at the current tick
    PRIMARY KEY (chain_id, height, pool_id)
);

--bun:split

CREATE TABLE osmosis_opening_cl_positions (
    chain_id    text        NOT NULL,
    height      bigint      NOT NULL,  -- the state's height (first indexed height - 1)
    position_id bigint      NOT NULL,
    pool_id     bigint      NOT NULL,
    address     text        NOT NULL,  -- the owner at that height
    lower_tick  bigint      NOT NULL,
    upper_tick  bigint      NOT NULL,
    liquidity   numeric     NOT NULL,
    join_time   timestamptz,
    PRIMARY KEY (chain_id, height, position_id)
);

--bun:split

-- Every pool the dex reports know of: those created in indexed blocks
-- (osmosis_pools) and those a late start imported (osmosis_opening_pools,
-- once state_imports records the import of AllPools), these as rows of
-- osmosis_pools at the state's height, tx_index -3 (the state import's),
-- the time of the first indexed block and no creator. Readers of the pool
-- catalog read this view.
CREATE VIEW osmosis_known_pools AS
SELECT chain_id, height, tx_index, event_index, msg_index, time, pool_id, type, creator, denoms, swap_fee, weights, tick_spacing, exit_fee
FROM osmosis_pools
UNION ALL
SELECT i.chain_id, o.height, -3, 0, -1, b.time, o.pool_id, o.type, '', o.denoms, o.swap_fee, o.weights, o.tick_spacing, o.exit_fee
FROM state_imports i
CROSS JOIN LATERAL (SELECT time FROM blocks WHERE chain_id = i.chain_id AND height > i.height ORDER BY height LIMIT 1) b
JOIN osmosis_opening_pools o ON o.chain_id = i.chain_id AND o.height = i.height
WHERE i.part = '/osmosis.poolmanager.v1beta1.Query/AllPools';
