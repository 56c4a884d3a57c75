-- Liquidations stored before the catalog knew their market (listed after
-- genesis, seen at the next state snapshot): the perp_trading job sizes
-- them on every run once it does.
CREATE INDEX perp_liquidations_unsized_idx ON perp_liquidations (chain_id) WHERE size IS NULL;
