-- Report table of the perp_trading job: the NATIVE supply (base units) of
-- the perp chain: the balances at genesis, every balance change since
-- (their sum is the bank supply: mints and burns move balances, transfers
-- net to zero), and the coins minted (coinbase) and burnt (burn) since
-- genesis.
CREATE TABLE perp_supply (
    chain_id text    PRIMARY KEY,
    genesis  numeric NOT NULL,
    total    numeric NOT NULL,
    minted   numeric NOT NULL,
    burnt    numeric NOT NULL
);
