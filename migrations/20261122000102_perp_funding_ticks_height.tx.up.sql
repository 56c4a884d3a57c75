-- The perp_trading job looks up which funding ticks are done by height
-- (every run); the primary key leads with the perpetual.
CREATE INDEX perp_funding_ticks_height_idx ON perp_funding_ticks (chain_id, height);
