-- Each trader's fills, volume and fees per market over the last-30-day
-- window, kept by the perp_traders job as the window moves: a run adds its
-- fills and takes out the days that left the window, and the traders'
-- last-30-day fields are read from these rows instead of summing 30 days
-- of perp_trader_daily for every trader in the window each time it moves
-- (a cost that grew with the window's traders). Filled by the job's
-- version 3 rebuild.
CREATE TABLE perp_trader_window_markets (
    chain_id     text    NOT NULL,
    address      text    NOT NULL,
    perpetual_id integer NOT NULL,
    trades       bigint  NOT NULL,
    volume_usdc  numeric NOT NULL,
    fees_usdc    numeric NOT NULL,
    PRIMARY KEY (chain_id, address, perpetual_id)
);
