-- dYdX oracle markets: the catalog at genesis (height 0: pair and price
-- exponent of app_state.prices), and every oracle price the chain set: the
-- genesis prices at height 0, then each MsgUpdateMarketPrices (the
-- proposer's last tx of a block). Prices are raw integers: the human price
-- is price × 10^exponent of the market. Written by the dydx adapter.
CREATE TABLE dydx_markets (
    chain_id  text    NOT NULL,
    height    bigint  NOT NULL,
    market_id integer NOT NULL,
    pair      text    NOT NULL,
    exponent  integer NOT NULL,
    PRIMARY KEY (chain_id, height, market_id)
) PARTITION BY RANGE (height);

--bun:split

CREATE TABLE dydx_prices (
    chain_id  text        NOT NULL,
    height    bigint      NOT NULL,
    market_id integer     NOT NULL,
    time      timestamptz NOT NULL,
    price     numeric     NOT NULL,
    PRIMARY KEY (chain_id, height, market_id)
) PARTITION BY RANGE (height);

--bun:split

-- Report tables of the perp_trading job.

-- The last oracle price of each market in each UTC hour with an update,
-- and the height that set it.
CREATE TABLE perp_price_hourly (
    chain_id  text        NOT NULL,
    market_id integer     NOT NULL,
    hour      timestamptz NOT NULL,
    height    bigint      NOT NULL,
    price     numeric     NOT NULL,
    PRIMARY KEY (chain_id, market_id, hour)
);

--bun:split

-- Every subaccount's perpetual position (base quantums, negative = short),
-- summed from its fills (regular, liquidation and deleveraging).
CREATE TABLE perp_positions (
    chain_id          text    NOT NULL,
    address           text    NOT NULL,
    subaccount_number integer NOT NULL,
    perpetual_id      integer NOT NULL,
    size              numeric NOT NULL,
    PRIMARY KEY (chain_id, address, subaccount_number, perpetual_id)
);

--bun:split

-- Open interest (the sum of long positions, base quantums) of each market
-- after the last fill of each UTC hour with fills.
CREATE TABLE perp_open_interest_hourly (
    chain_id      text        NOT NULL,
    perpetual_id  integer     NOT NULL,
    hour          timestamptz NOT NULL,
    open_interest numeric     NOT NULL,
    PRIMARY KEY (chain_id, perpetual_id, hour)
);
