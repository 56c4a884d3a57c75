-- dYdX perpetual markets: the catalog at genesis (height 0, from the
-- perpetuals module's genesis state), one row per perpetual; a market
-- created later gets a row at its creation height. Written by the dydx
-- adapter with the raw rows.
CREATE TABLE dydx_perpetuals (
    chain_id          text    NOT NULL,
    height            bigint  NOT NULL,
    perpetual_id      integer NOT NULL,
    ticker            text    NOT NULL,
    market_id         integer NOT NULL,
    atomic_resolution integer NOT NULL,
    market_type       integer NOT NULL,
    PRIMARY KEY (chain_id, height, perpetual_id)
) PARTITION BY RANGE (height);

--bun:split

-- Report tables of the perp_trading job (aggregator/perp), built from
-- dydx_fills and the dydx chain's signed txs. USDC amounts are decimals
-- (quote quantums × 10^-6).

-- Per market and UTC hour: fills (one per match event), their notional,
-- the taker and maker fees (maker rebates negative), liquidation fills.
CREATE TABLE perp_market_hourly (
    chain_id          text        NOT NULL,
    perpetual_id      integer     NOT NULL,
    hour              timestamptz NOT NULL,
    fills             bigint      NOT NULL,
    volume_usdc       numeric     NOT NULL,
    taker_fees_usdc   numeric     NOT NULL,
    maker_fees_usdc   numeric     NOT NULL,
    liquidation_fills bigint      NOT NULL,
    PRIMARY KEY (chain_id, perpetual_id, hour)
);
CREATE INDEX perp_market_hourly_hour_idx ON perp_market_hourly (chain_id, hour);

--bun:split

-- Per trader (subaccount owner), market and UTC day: the fills the trader
-- took part in (a self-trade counts once), their notional (as a whole, as
-- taker and as maker) and the fees the trader paid.
CREATE TABLE perp_trader_daily (
    chain_id          text        NOT NULL,
    address           text        NOT NULL,
    perpetual_id      integer     NOT NULL,
    day               timestamptz NOT NULL,
    trades            bigint      NOT NULL,
    volume_usdc       numeric     NOT NULL,
    taker_volume_usdc numeric     NOT NULL,
    maker_volume_usdc numeric     NOT NULL,
    fees_usdc         numeric     NOT NULL,
    PRIMARY KEY (chain_id, address, day, perpetual_id)
);
CREATE INDEX perp_trader_daily_day_idx ON perp_trader_daily (chain_id, day);

--bun:split

-- One row per address that traded or signed a tx on the perp chain: the
-- /perp/crm record as of the job's last run. The last-30-day fields cover
-- the 30 UTC days ending with the day of the last aggregated block.
CREATE TABLE perp_traders (
    chain_id              text        NOT NULL,
    address               text        NOT NULL,
    all_time_trades       bigint      NOT NULL DEFAULT 0,
    all_time_volume_usdc  numeric     NOT NULL DEFAULT 0,
    all_time_fees_usdc    numeric     NOT NULL DEFAULT 0,
    all_time_top_markets  integer[]   NOT NULL DEFAULT '{}',
    all_time_top_volumes  numeric[]   NOT NULL DEFAULT '{}',
    last_30d_trades       bigint      NOT NULL DEFAULT 0,
    last_30d_volume_usdc  numeric     NOT NULL DEFAULT 0,
    last_30d_fees_usdc    numeric     NOT NULL DEFAULT 0,
    last_30d_top_markets  integer[]   NOT NULL DEFAULT '{}',
    last_30d_top_volumes  numeric[]   NOT NULL DEFAULT '{}',
    first_fill_at         timestamptz,
    last_fill_at          timestamptz,
    tx_count              bigint      NOT NULL DEFAULT 0,
    first_tx_at           timestamptz,
    last_tx_at            timestamptz,
    PRIMARY KEY (chain_id, address)
);
CREATE INDEX perp_traders_volume_idx ON perp_traders (chain_id, all_time_volume_usdc DESC) WHERE all_time_trades > 0;

--bun:split

-- The height the perp_trading job's report rows include, per chain. The
-- job adds new heights to the reports; when its watermark is found below
-- this height (an operator reset it to rebuild), it clears the chain's
-- report rows and rebuilds them from the first height.
CREATE TABLE perp_report_state (
    chain_id text   PRIMARY KEY,
    height   bigint NOT NULL
);
