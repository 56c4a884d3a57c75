-- Fill sides now record their direction (is_buy: the side's perpetual
-- position grew, i.e. its perpetual delta is positive) and the insurance
-- fund's delta of the fill (insurance_fund_delta_quote_quantums: > 0 the fund
-- received a liquidation fee, < 0 it covered a shortfall; 0 outside
-- liquidations). Rows written before are completed from their match events.
ALTER TABLE dydx_fills ADD COLUMN is_buy boolean, ADD COLUMN insurance_delta numeric;

--bun:split

UPDATE dydx_fills f SET
    is_buy = (SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a
              WHERE a->>'key' = f.role || '_perpetual_quantums_delta_base_quantums' LIMIT 1)::numeric > 0,
    insurance_delta = coalesce((SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a
              WHERE a->>'key' = 'insurance_fund_delta_quote_quantums' LIMIT 1)::numeric, 0)
FROM events e
WHERE e.chain_id = f.chain_id AND e.height = f.height AND e.tx_index = f.tx_index AND e.event_index = f.event_index
    AND e.type = 'match' AND f.is_buy IS NULL;

--bun:split

-- Report table of the perp_trading job: one row per liquidation fill (the
-- liquidated subaccount is the taker; deleveraging is not a liquidation).
CREATE TABLE perp_liquidations (
    chain_id          text        NOT NULL,
    height            bigint      NOT NULL,
    tx_index          integer     NOT NULL,
    event_index       integer     NOT NULL,
    time              timestamptz NOT NULL,
    tx_hash           text,                  -- the MsgProposedOperations tx; NULL for a block-level event
    address           text        NOT NULL,
    subaccount_number integer     NOT NULL,
    perpetual_id      integer     NOT NULL,
    position          text        NOT NULL CHECK (position IN ('long', 'short')),
    size              numeric     NOT NULL,  -- base asset units (base quantums × 10^atomic_resolution); NULL-free: quantums when the market is unknown
    notional_usdc     numeric     NOT NULL,
    insurance_usdc    numeric     NOT NULL,  -- insurance fund delta
    PRIMARY KEY (chain_id, height, tx_index, event_index)
);
CREATE INDEX perp_liquidations_time_idx ON perp_liquidations (chain_id, time);
