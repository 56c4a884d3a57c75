DROP VIEW osmosis_known_pools;

--bun:split

DROP TABLE osmosis_opening_cl_positions;

--bun:split

DROP TABLE osmosis_opening_pools;
