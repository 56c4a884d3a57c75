DROP INDEX osmosis_pools_pool_idx;

--bun:split

DROP INDEX osmosis_cl_positions_position_idx;
