-- /trading/traders_ranking reads the first 100 traders by maker or taker
-- volume (total volume: perp_traders_volume_idx). Built without blocking
-- the perp_traders job.
CREATE INDEX CONCURRENTLY IF NOT EXISTS perp_traders_maker_volume_idx ON perp_traders (chain_id, all_time_maker_volume_usdc DESC)
    WHERE all_time_trades > 0;

--bun:split

CREATE INDEX CONCURRENTLY IF NOT EXISTS perp_traders_taker_volume_idx ON perp_traders (chain_id, all_time_taker_volume_usdc DESC)
    WHERE all_time_trades > 0;
