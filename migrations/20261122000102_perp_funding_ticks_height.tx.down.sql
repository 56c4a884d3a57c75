DROP INDEX IF EXISTS perp_funding_ticks_height_idx;
