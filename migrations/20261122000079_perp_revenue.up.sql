-- The chain's own token (NATIVE) as the rewards module's genesis params
-- define it: its denom, its decimals (-denom_exponent), and the oracle
-- market that prices it; and the denom of the quote asset (asset 0, USDC,
-- 6 decimals). Written by the dydx adapter at genesis (height 0).
CREATE TABLE dydx_native_token (
    chain_id    text    NOT NULL,
    height      bigint  NOT NULL,
    denom       text    NOT NULL,
    decimals    integer NOT NULL,
    market_id   integer NOT NULL,
    quote_denom text    NOT NULL,
    PRIMARY KEY (chain_id, height)
) PARTITION BY RANGE (height);

--bun:split

-- Report table of the perp_trading job: the chain's revenue per UTC day and
-- source, in USDC: trading_fees (taker plus maker fees of the fills) and
-- tx_fees (fees of signed txs paid in USDC, or in NATIVE valued at the last
-- oracle price of the tx's hour).
CREATE TABLE perp_revenue_daily (
    chain_id text        NOT NULL,
    day      timestamptz NOT NULL,
    source   text        NOT NULL CHECK (source IN ('trading_fees', 'tx_fees')),
    amount   numeric     NOT NULL,
    PRIMARY KEY (chain_id, day, source)
);
