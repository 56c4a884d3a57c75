DROP TABLE IF EXISTS osmosis_cl_ticks_hourly;
--bun:split
DROP TABLE IF EXISTS osmosis_cl_state_hourly;
--bun:split
ALTER TABLE osmosis_cl_positions DROP COLUMN IF EXISTS provided;
--bun:split
ALTER TABLE osmosis_swaps DROP COLUMN IF EXISTS exact_out;
