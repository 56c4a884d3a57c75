-- The funding job now finds each perpetual's last tick through the primary
-- key (chain_id, perpetual_id, height); nothing looks ticks up by height.
DROP INDEX IF EXISTS perp_funding_ticks_height_idx;
