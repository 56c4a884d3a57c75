-- Each trader's all-time volume per market, kept by the perp_traders job
-- as fills arrive: a trader's top 3 markets are read from its markets'
-- rows instead of summing its every day of perp_trader_daily (a cost that
-- grew with history).
CREATE TABLE perp_trader_markets (
    chain_id     text    NOT NULL,
    address      text    NOT NULL,
    perpetual_id integer NOT NULL,
    volume_usdc  numeric NOT NULL,
    PRIMARY KEY (chain_id, address, perpetual_id)
);
