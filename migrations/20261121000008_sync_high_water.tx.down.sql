ALTER TABLE sync_state DROP COLUMN IF EXISTS high_water;
