-- USDC and other assets moved into, out of and between dYdX subaccounts
-- (the sending module's events, chain-events.md §6.2): deposit (wallet →
-- subaccount), withdraw (subaccount → wallet), transfer (subaccount →
-- subaccount). Quantums of the asset (asset 0 = USDC, 6 decimals).
-- Written by the dydx adapter.
CREATE TABLE dydx_transfers (
    chain_id          text        NOT NULL,
    height            bigint      NOT NULL,
    tx_index          integer     NOT NULL,
    event_index       integer     NOT NULL,
    kind              text        NOT NULL CHECK (kind IN ('deposit', 'withdraw', 'transfer')),
    time              timestamptz NOT NULL,
    sender            text        NOT NULL,
    sender_number     integer,              -- NULL for a deposit (from a wallet)
    recipient         text        NOT NULL,
    recipient_number  integer,              -- NULL for a withdrawal (to a wallet)
    asset_id          integer     NOT NULL,
    quantums          numeric     NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);

--bun:split

-- Report table of the perp_trading job: USDC each address deposited into
-- subaccounts per UTC hour.
CREATE TABLE perp_deposits_hourly (
    chain_id text        NOT NULL,
    hour     timestamptz NOT NULL,
    address  text        NOT NULL,
    usdc     numeric     NOT NULL,
    PRIMARY KEY (chain_id, hour, address)
);
