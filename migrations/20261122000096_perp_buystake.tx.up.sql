-- The buy-and-stake programme address (config perp.buystake_address) per
-- UTC hour, built by the perp_trading job: NATIVE it received from other
-- accounts (bought), its NATIVE and USDC balance changes, the NATIVE it
-- delegated (net of undelegations) and the staking rewards it withdrew;
-- amounts in base units.
CREATE TABLE perp_buystake_hourly (
    chain_id        text        NOT NULL,
    address         text        NOT NULL,
    hour            timestamptz NOT NULL,
    native_in       numeric     NOT NULL,
    native_delta    numeric     NOT NULL,
    usdc_delta      numeric     NOT NULL,
    staked_delta    numeric     NOT NULL,
    claimed_native  numeric     NOT NULL,
    claimed_usdc    numeric     NOT NULL,
    PRIMARY KEY (chain_id, address, hour)
);
