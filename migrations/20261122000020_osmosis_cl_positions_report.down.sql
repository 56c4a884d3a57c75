DROP TABLE IF EXISTS osmosis_position_rewards;
--bun:split
DROP TABLE IF EXISTS osmosis_position_principals;
--bun:split
DROP TABLE IF EXISTS osmosis_cl_adds;
--bun:split
DROP TABLE IF EXISTS osmosis_cl_rewards;
--bun:split
ALTER TABLE osmosis_pools DROP COLUMN IF EXISTS weights;
