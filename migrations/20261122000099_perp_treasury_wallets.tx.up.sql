-- The treasury sub-DAO wallets (config perp.treasury_subdao) per UTC day,
-- built by the perp_trading job: each wallet's balance change per denom
-- and the NATIVE it delegated (net of undelegations); base units.
CREATE TABLE perp_wallet_daily (
    chain_id     text        NOT NULL,
    address      text        NOT NULL,
    day          timestamptz NOT NULL,
    denom        text        NOT NULL,
    liquid_delta numeric     NOT NULL,
    staked_delta numeric     NOT NULL,
    PRIMARY KEY (chain_id, address, day, denom)
);

--bun:split

-- The configured addresses the perp_trading job's per-address reports were
-- built for, by role (buystake, treasury_subdao). An address the
-- configuration adds is aggregated from the first height in the run that
-- sees it; one it drops loses its rows.
CREATE TABLE perp_tracked_wallets (
    chain_id text NOT NULL,
    role     text NOT NULL,
    address  text NOT NULL,
    PRIMARY KEY (chain_id, role, address)
);

--bun:split

-- Every buy-and-stake address aggregated so far is the configured one.
INSERT INTO perp_tracked_wallets (chain_id, role, address)
SELECT DISTINCT chain_id, 'buystake', address FROM perp_buystake_hourly;
