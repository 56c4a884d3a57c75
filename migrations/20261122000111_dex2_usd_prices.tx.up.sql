-- The USD prices the dex2 job reads from the second dex chain's own fills:
-- every fill of a denom against a USD-pegged asset, with its USD value and
-- its amount of the denom. A fill without a USD-pegged side is valued at a
-- side's last such price from an earlier block (one index probe).
CREATE TABLE dex2_usd_prices (
    chain_id     text    NOT NULL,
    denom        text    NOT NULL,
    height       bigint  NOT NULL,
    tx_index     integer NOT NULL,
    event_index  integer NOT NULL,
    usd          numeric NOT NULL,
    amount       numeric NOT NULL CHECK (amount > 0),
    PRIMARY KEY (chain_id, denom, height, tx_index, event_index)
);
