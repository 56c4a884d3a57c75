-- Concentrated-liquidity ticks kept as changes (dex_cl_state job, version
-- 2). Version 1 wrote every initialized tick of each touched pool at the end
-- of every hour: rows that grew with the open positions, not with new events.
--
-- osmosis_cl_tick_changes: the ticks of a pool whose net or gross liquidity
-- changed in an hour, with their values at the hour's end; gross 0: the tick
-- is no longer initialized. A pool's ticks at the end of hour h are the last
-- change of each tick at or before h, where its gross is positive
-- (report/dex TicksAt). The rows of version 1 are cleared by the job's
-- version change, which rebuilds them.
ALTER TABLE osmosis_cl_ticks_hourly RENAME TO osmosis_cl_tick_changes;

--bun:split

ALTER TABLE osmosis_cl_tick_changes RENAME CONSTRAINT osmosis_cl_ticks_hourly_pkey TO osmosis_cl_tick_changes_pkey;

--bun:split

-- Every pool's ticks at the start of osmosis_cl_tick_base_hour.hour: the
-- changes of the hours before it, folded (no row for a tick not
-- initialized). The job starts each run from it and moves it to the run's
-- first rewritten hour, so neither the job nor a reader of the current
-- ticks goes through the whole history of changes.
CREATE TABLE osmosis_cl_tick_base (
    chain_id        text   NOT NULL,
    pool_id         bigint NOT NULL,
    tick            bigint NOT NULL,
    liquidity_net   numeric NOT NULL,
    liquidity_gross numeric NOT NULL,
    PRIMARY KEY (chain_id, pool_id, tick)
);

--bun:split

CREATE TABLE osmosis_cl_tick_base_hour (
    chain_id text        PRIMARY KEY,
    hour     timestamptz NOT NULL
);
