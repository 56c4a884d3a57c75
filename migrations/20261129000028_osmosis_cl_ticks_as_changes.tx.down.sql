-- Back to a table named for full hourly tick sets; the job of version 1
-- finds rows of version 2 and rebuilds them.
DROP TABLE osmosis_cl_tick_base_hour;

--bun:split

DROP TABLE osmosis_cl_tick_base;

--bun:split

ALTER TABLE osmosis_cl_tick_changes RENAME CONSTRAINT osmosis_cl_tick_changes_pkey TO osmosis_cl_ticks_hourly_pkey;

--bun:split

ALTER TABLE osmosis_cl_tick_changes RENAME TO osmosis_cl_ticks_hourly;
