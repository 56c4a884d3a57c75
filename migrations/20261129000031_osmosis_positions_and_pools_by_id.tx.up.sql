-- Lookups by id in two tables keyed by height. Both are partitioned, so
-- the indexes cannot be built concurrently; both are small (a row per
-- position change, about 2,600 a day on the generated Osmosis; a row per
-- pool) and each build holds back the indexer's writes to its table for
-- that long only.
--
-- A position's rows (create, withdraw): the dex_lp_holdings job re-sums
-- each position a run touches and looks up its create row, and each
-- lookup scanned every position row of the chain, a cost that grew with
-- history.
CREATE INDEX osmosis_cl_positions_position_idx ON osmosis_cl_positions (chain_id, position_id, height);

--bun:split

-- A pool's record: the jobs join position and liquidity rows to their
-- pool's denoms (osmosis_known_pools), which read every pool per row.
CREATE INDEX osmosis_pools_pool_idx ON osmosis_pools (chain_id, pool_id);
