ALTER TABLE osmosis_pools DROP COLUMN IF EXISTS tick_spacing;
