-- /trading/traders_ranking reads the first 100 traders by total, maker or
-- taker volume, and /perp/crm's default order is the total volume: each
-- reads the first rows of one of these indexes (ties by address, in the
-- order of the queries' ORDER BY ... DESC NULLS LAST, address) instead of
-- sorting every trader. Built without blocking the perp_traders job; the
-- total-volume index replaces perp_traders_volume_idx, whose order (NULLS
-- FIRST, no address) no query matched.
CREATE INDEX CONCURRENTLY IF NOT EXISTS perp_traders_total_volume_idx
    ON perp_traders (chain_id, all_time_volume_usdc DESC NULLS LAST, address) WHERE all_time_trades > 0;

--bun:split

CREATE INDEX CONCURRENTLY IF NOT EXISTS perp_traders_maker_volume_idx
    ON perp_traders (chain_id, all_time_maker_volume_usdc DESC NULLS LAST, address) WHERE all_time_trades > 0;

--bun:split

CREATE INDEX CONCURRENTLY IF NOT EXISTS perp_traders_taker_volume_idx
    ON perp_traders (chain_id, all_time_taker_volume_usdc DESC NULLS LAST, address) WHERE all_time_trades > 0;

--bun:split

DROP INDEX CONCURRENTLY IF EXISTS perp_traders_volume_idx;
