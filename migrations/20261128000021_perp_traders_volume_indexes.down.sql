CREATE INDEX CONCURRENTLY IF NOT EXISTS perp_traders_volume_idx ON perp_traders (chain_id, all_time_volume_usdc DESC) WHERE all_time_trades > 0;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS perp_traders_total_volume_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS perp_traders_maker_volume_idx;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS perp_traders_taker_volume_idx;
