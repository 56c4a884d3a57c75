ALTER TABLE osmosis_pools DROP COLUMN IF EXISTS exit_fee;

--bun:split

ALTER TABLE osmosis_pools DROP COLUMN IF EXISTS tick_spacing;
