CREATE INDEX IF NOT EXISTS perp_funding_ticks_height_idx ON perp_funding_ticks (chain_id, height);
