-- Distinct wallets that sent a swap (osmosis_wallet_daily.swaps > 0) on the
-- 30 UTC days ending each day (dex_activity job, in the transaction that
-- rewrites the days). Days without such a wallet have no row.
CREATE TABLE osmosis_traders_30d (
    chain_id text        NOT NULL,
    day      timestamptz NOT NULL,  -- last day of the window, 00:00 UTC
    traders  integer     NOT NULL,
    PRIMARY KEY (chain_id, day)
);
--bun:split
-- Existing days are counted once here (as the job does from a day d0: each
-- wallet counts from each of its swap days until its next one or 30 days on).
INSERT INTO osmosis_traders_30d (chain_id, day, traders)
WITH iv AS (SELECT chain_id, day AS s, least(coalesce(lead(day) OVER (PARTITION BY chain_id, address ORDER BY day), day + interval '720 hours'),
		day + interval '720 hours') AS e
	FROM osmosis_wallet_daily WHERE swaps > 0),
ds AS (SELECT chain_id, d, sum(c) AS c FROM (SELECT chain_id, s AS d, 1 AS c FROM iv UNION ALL SELECT chain_id, e, -1 FROM iv) ev GROUP BY 1, 2),
run AS (SELECT chain_id, d, sum(c) OVER (PARTITION BY chain_id ORDER BY d) AS n, lead(d) OVER (PARTITION BY chain_id ORDER BY d) AS nd FROM ds)
SELECT run.chain_id, g.day, run.n FROM run CROSS JOIN LATERAL generate_series(run.d, run.nd - interval '24 hours', interval '24 hours') g(day)
WHERE run.n > 0;
