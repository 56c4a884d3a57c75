DROP INDEX CONCURRENTLY IF EXISTS perp_traders_maker_volume_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS perp_traders_taker_volume_idx;
