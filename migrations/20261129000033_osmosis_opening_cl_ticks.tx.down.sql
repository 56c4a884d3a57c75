DROP TABLE IF EXISTS osmosis_opening_cl_tick_info;

--bun:split

DROP TABLE IF EXISTS osmosis_opening_cl_ticks;
