// Package perp builds the report tables of the perpetuals exchange groups
// (dYdX v4) from the rows of the dydx adapter (chains/dydx): dydx_fills,
// dydx_perpetuals, and the chain's signed txs.
package perp

// Last30Days is the length of the last-30-day window, in UTC days.
const Last30Days = 30

// Queries of a run; arguments ?0 chain, ?1 watermark, ?2 last height.
// Quote quantums are USDC × 10^6; multiplying by 0.000001 is exact.
const (
	// Each fill has one taker row: it counts the fill and its notional.
	marketHourlySQL = `INSERT INTO perp_market_hourly AS m
		(chain_id, perpetual_id, hour, fills, volume_usdc, taker_fees_usdc, maker_fees_usdc, liquidation_fills)
		SELECT ?0, perpetual_id, date_trunc('hour', time, 'UTC'),
			count(*) FILTER (WHERE role = 'taker'),
			coalesce(sum(notional) FILTER (WHERE role = 'taker'), 0) * 0.000001,
			coalesce(sum(fee) FILTER (WHERE role = 'taker'), 0) * 0.000001,
			coalesce(sum(fee) FILTER (WHERE role = 'maker'), 0) * 0.000001,
			count(*) FILTER (WHERE role = 'taker' AND is_liquidation)
		FROM dydx_fills WHERE chain_id = ?0 AND height > ?1 AND height <= ?2
		GROUP BY perpetual_id, date_trunc('hour', time, 'UTC')
		ON CONFLICT (chain_id, perpetual_id, hour) DO UPDATE SET
			fills = m.fills + EXCLUDED.fills, volume_usdc = m.volume_usdc + EXCLUDED.volume_usdc,
			taker_fees_usdc = m.taker_fees_usdc + EXCLUDED.taker_fees_usdc,
			maker_fees_usdc = m.maker_fees_usdc + EXCLUDED.maker_fees_usdc,
			liquidation_fills = m.liquidation_fills + EXCLUDED.liquidation_fills`

	// One row per fill and trader: a self-trade (both sides one owner) is
	// one fill of that trader, with both fees.
	fillsByTrader = `SELECT address, perpetual_id, min(time) AS time, max(notional) AS notional, sum(fee) AS fee,
			bool_or(role = 'taker') AS taker, bool_or(role = 'maker') AS maker
		FROM dydx_fills WHERE chain_id = ?0 AND height > ?1 AND height <= ?2
		GROUP BY address, perpetual_id, height, tx_index, event_index`

	traderDailySQL = `INSERT INTO perp_trader_daily AS d
		(chain_id, address, perpetual_id, day, trades, volume_usdc, taker_volume_usdc, maker_volume_usdc, fees_usdc)
		SELECT ?0, address, perpetual_id, date_trunc('day', time, 'UTC'), count(*), sum(notional) * 0.000001,
			coalesce(sum(notional) FILTER (WHERE taker), 0) * 0.000001,
			coalesce(sum(notional) FILTER (WHERE maker), 0) * 0.000001,
			sum(fee) * 0.000001
		FROM (` + fillsByTrader + `) f
		GROUP BY address, perpetual_id, date_trunc('day', time, 'UTC')
		ON CONFLICT (chain_id, address, day, perpetual_id) DO UPDATE SET
			trades = d.trades + EXCLUDED.trades, volume_usdc = d.volume_usdc + EXCLUDED.volume_usdc,
			taker_volume_usdc = d.taker_volume_usdc + EXCLUDED.taker_volume_usdc,
			maker_volume_usdc = d.maker_volume_usdc + EXCLUDED.maker_volume_usdc,
			fees_usdc = d.fees_usdc + EXCLUDED.fees_usdc`

	traderFillsSQL = `INSERT INTO perp_traders AS p
		(chain_id, address, all_time_trades, all_time_volume_usdc, all_time_maker_volume_usdc, all_time_taker_volume_usdc,
			all_time_fees_usdc, first_fill_at, last_fill_at)
		SELECT ?0, address, count(*), sum(notional) * 0.000001,
			coalesce(sum(notional) FILTER (WHERE maker), 0) * 0.000001,
			coalesce(sum(notional) FILTER (WHERE taker), 0) * 0.000001,
			sum(fee) * 0.000001, min(time), max(time)
		FROM (` + fillsByTrader + `) f
		GROUP BY address
		ON CONFLICT (chain_id, address) DO UPDATE SET
			all_time_trades = p.all_time_trades + EXCLUDED.all_time_trades,
			all_time_volume_usdc = p.all_time_volume_usdc + EXCLUDED.all_time_volume_usdc,
			all_time_maker_volume_usdc = p.all_time_maker_volume_usdc + EXCLUDED.all_time_maker_volume_usdc,
			all_time_taker_volume_usdc = p.all_time_taker_volume_usdc + EXCLUDED.all_time_taker_volume_usdc,
			all_time_fees_usdc = p.all_time_fees_usdc + EXCLUDED.all_time_fees_usdc,
			first_fill_at = least(p.first_fill_at, EXCLUDED.first_fill_at),
			last_fill_at = greatest(p.last_fill_at, EXCLUDED.last_fill_at)`

	// Signed txs (failed ones too: their signers paid fees); a tx counts
	// once per distinct signer.
	traderTxsSQL = `INSERT INTO perp_traders AS p (chain_id, address, tx_count, first_tx_at, last_tx_at)
		SELECT ?0, s.address, count(DISTINCT (t.height, t.tx_index)), min(b.time), max(b.time)
		FROM txs t
		JOIN blocks b ON b.chain_id = t.chain_id AND b.height = t.height
		CROSS JOIN LATERAL unnest(t.signers) AS s(address)
		WHERE t.chain_id = ?0 AND t.height > ?1 AND t.height <= ?2
		GROUP BY s.address
		ON CONFLICT (chain_id, address) DO UPDATE SET
			tx_count = p.tx_count + EXCLUDED.tx_count,
			first_tx_at = least(p.first_tx_at, EXCLUDED.first_tx_at),
			last_tx_at = greatest(p.last_tx_at, EXCLUDED.last_tx_at)`

	// Each trader's all-time volume per market.
	traderMarketsSQL = `INSERT INTO perp_trader_markets AS m (chain_id, address, perpetual_id, volume_usdc)
		SELECT ?0, address, perpetual_id, sum(notional) * 0.000001
		FROM (` + fillsByTrader + `) f
		GROUP BY address, perpetual_id
		ON CONFLICT (chain_id, address, perpetual_id) DO UPDATE SET volume_usdc = m.volume_usdc + EXCLUDED.volume_usdc`

	// The liquidated subaccount is the taker: it bought to close a short,
	// sold to close a long. Sizes in base units need the market's atomic
	// resolution: the catalog row in force at the fill, else the first one
	// after it (a market listed after genesis enters the catalog at the
	// next state snapshot, which may come after its first fills); NULL
	// while the catalog lacks the market, until liquidationSizesSQL fills
	// it in.
	liquidationsSQL = `INSERT INTO perp_liquidations (chain_id, height, tx_index, event_index, time, tx_hash, address,
			subaccount_number, perpetual_id, position, size, notional_usdc, insurance_usdc)
		SELECT f.chain_id, f.height, f.tx_index, f.event_index, f.time, t.hash, f.address, f.subaccount_number, f.perpetual_id,
			CASE WHEN f.is_buy THEN 'short' ELSE 'long' END,
			f.size * ('1e' || p.atomic_resolution)::numeric,
			f.notional * 0.000001, coalesce(f.insurance_delta, 0) * 0.000001
		FROM dydx_fills f
		LEFT JOIN txs t ON t.chain_id = f.chain_id AND t.height = f.height AND t.tx_index = f.tx_index
		LEFT JOIN LATERAL (` + fillResolutionSQL + `) p ON true
		WHERE f.chain_id = ?0 AND f.height > ?1 AND f.height <= ?2 AND f.role = 'taker' AND f.is_liquidation AND NOT f.is_deleverage
		ON CONFLICT (chain_id, height, tx_index, event_index) DO NOTHING`

	// fillResolutionSQL is the atomic resolution of fill f's perpetual:
	// the newest catalog row at or below the fill's height, else the
	// earliest one above it.
	fillResolutionSQL = `SELECT atomic_resolution FROM dydx_perpetuals
			WHERE chain_id = f.chain_id AND perpetual_id = f.perpetual_id
			ORDER BY height > f.height, abs(height - f.height) LIMIT 1`

	// liquidationSizesSQL sizes the liquidations stored while the catalog
	// lacked their market, once it has it (every run; the partial index
	// perp_liquidations_unsized_idx keeps it free when there are none).
	liquidationSizesSQL = `UPDATE perp_liquidations l SET size = f.size * ('1e' || p.atomic_resolution)::numeric
		FROM dydx_fills f
		CROSS JOIN LATERAL (` + fillResolutionSQL + `) p
		WHERE l.chain_id = ?0 AND l.size IS NULL
			AND f.chain_id = l.chain_id AND f.height = l.height AND f.tx_index = l.tx_index AND f.event_index = l.event_index
			AND f.role = 'taker'`

	// Deposits of USDC (asset 0) from a wallet into a subaccount, per
	// address and bucket of every resolution (?3), and per bucket the
	// depositors of each size class, moved by what the run changes: an
	// address's first deposit in a bucket adds it to its class, a deposit
	// that takes its total across 1,000 or 100,000 USDC moves it up (the
	// totals only grow). Every part reads the buckets as they were before
	// the run (one statement, one snapshot).
	depositClassesSQL = `WITH run AS (
			SELECT r.res, date_trunc(r.res, time, 'UTC') AS bucket, sender AS address, sum(quantums) * 0.000001 AS usdc
			FROM dydx_transfers CROSS JOIN unnest(?3::text[]) AS r(res)
			WHERE chain_id = ?0 AND height > ?1 AND height <= ?2 AND kind = 'deposit' AND asset_id = 0
			GROUP BY 1, 2, 3
		), d AS (
			SELECT run.res, run.bucket,
				CASE WHEN b.usdc IS NULL THEN -1 WHEN b.usdc < 1000 THEN 0 WHEN b.usdc < 100000 THEN 1 ELSE 2 END AS before,
				CASE WHEN coalesce(b.usdc, 0) + run.usdc < 1000 THEN 0 WHEN coalesce(b.usdc, 0) + run.usdc < 100000 THEN 1 ELSE 2 END AS after
			FROM run LEFT JOIN perp_depositor_buckets b
				ON b.chain_id = ?0 AND b.resolution = run.res AND b.bucket = run.bucket AND b.address = run.address
		), kept AS (
			INSERT INTO perp_depositor_buckets AS b (chain_id, resolution, bucket, address, usdc)
			SELECT ?0, res, bucket, address, usdc FROM run
			ON CONFLICT (chain_id, resolution, bucket, address) DO UPDATE SET usdc = b.usdc + EXCLUDED.usdc
			RETURNING 1
		), counted AS (
			INSERT INTO perp_deposit_classes AS c (chain_id, resolution, bucket, small, medium, large)
			SELECT ?0, res, bucket,
				count(*) FILTER (WHERE after = 0 AND before <> 0) - count(*) FILTER (WHERE before = 0 AND after <> 0),
				count(*) FILTER (WHERE after = 1 AND before <> 1) - count(*) FILTER (WHERE before = 1 AND after <> 1),
				count(*) FILTER (WHERE after = 2 AND before <> 2) - count(*) FILTER (WHERE before = 2 AND after <> 2)
			FROM d GROUP BY res, bucket
			ON CONFLICT (chain_id, resolution, bucket) DO UPDATE SET small = c.small + EXCLUDED.small,
				medium = c.medium + EXCLUDED.medium, large = c.large + EXCLUDED.large
			RETURNING 1
		)
		SELECT (SELECT count(*) FROM kept) + (SELECT count(*) FROM counted)`

	// Powers of ten are written as numeric literals ('1e-27'): exact, where
	// power(10::numeric, -27) rounds to 16 decimals.
	//
	// Trading fees are every fill side's fee; tx fees are the fees of
	// signed txs in the quote asset (USDC), or in NATIVE at the last oracle
	// price of the tx's hour (other denoms, or NATIVE without a price yet,
	// are not counted).
	revenueSQL = `INSERT INTO perp_revenue_daily AS r (chain_id, day, source, amount)
		SELECT ?0, day, source, sum(amount) FROM (
			SELECT date_trunc('day', time, 'UTC') AS day, 'trading_fees' AS source, fee * 0.000001 AS amount
			FROM dydx_fills WHERE chain_id = ?0 AND height > ?1 AND height <= ?2
			UNION ALL
			SELECT date_trunc('day', b.time, 'UTC'), 'tx_fees',
				CASE WHEN c->>'denom' = n.quote_denom THEN (c->>'amount')::numeric * 0.000001
				ELSE (c->>'amount')::numeric * ('1e' || (m.exponent - n.decimals))::numeric * (
					SELECT price FROM perp_price_hourly p
					WHERE p.chain_id = ?0 AND p.market_id = n.market_id AND p.hour <= date_trunc('hour', b.time, 'UTC')
					ORDER BY p.hour DESC LIMIT 1) END
			FROM txs t
			JOIN blocks b ON b.chain_id = t.chain_id AND b.height = t.height
			CROSS JOIN LATERAL jsonb_array_elements(t.fee) c
			JOIN LATERAL (SELECT * FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1) n
				ON c->>'denom' IN (n.denom, n.quote_denom)
			LEFT JOIN LATERAL (SELECT exponent FROM dydx_markets WHERE chain_id = ?0 AND market_id = n.market_id
				ORDER BY height DESC LIMIT 1) m ON true
			WHERE t.chain_id = ?0 AND t.height > ?1 AND t.height <= ?2
		) x WHERE amount IS NOT NULL
		GROUP BY day, source
		ON CONFLICT (chain_id, day, source) DO UPDATE SET amount = r.amount + EXCLUDED.amount`

	// The native denom's balance changes (on the first run with the
	// genesis balances, height 0) and its coinbase and burn transfers.
	supplySQL = `INSERT INTO perp_supply AS s (chain_id, genesis, total, minted, burnt)
		SELECT ?0,
			coalesce((SELECT sum(delta) FROM balance_changes WHERE chain_id = ?0 AND height = 0 AND ?1 = 0 AND denom = n.denom), 0),
			coalesce((SELECT sum(delta) FROM balance_changes
				WHERE chain_id = ?0 AND (height > ?1 OR (?1 = 0 AND height = 0)) AND height <= ?2 AND denom = n.denom), 0),
			coalesce((SELECT sum(amount) FROM transfers
				WHERE chain_id = ?0 AND height > ?1 AND height <= ?2 AND kind = 'coinbase' AND denom = n.denom), 0),
			coalesce((SELECT sum(amount) FROM transfers
				WHERE chain_id = ?0 AND height > ?1 AND height <= ?2 AND kind = 'burn' AND denom = n.denom), 0)
		FROM (SELECT denom FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1) n
		ON CONFLICT (chain_id) DO UPDATE SET genesis = s.genesis + EXCLUDED.genesis, total = s.total + EXCLUDED.total,
			minted = s.minted + EXCLUDED.minted, burnt = s.burnt + EXCLUDED.burnt`

	// Staking rewards: the rewards allocated to validators (commission
	// included), in the quote asset and in NATIVE.
	stakingRewardsSQL = `INSERT INTO perp_staking_rewards_daily AS s (chain_id, day, usdc, native)
		SELECT ?0, date_trunc('day', b.time, 'UTC'),
			coalesce(sum(r.amount) FILTER (WHERE r.denom = n.quote_denom), 0) * 0.000001,
			coalesce(sum(r.amount) FILTER (WHERE r.denom = n.denom), 0)
		FROM block_rewards r
		JOIN blocks b ON b.chain_id = r.chain_id AND b.height = r.height
		JOIN LATERAL (SELECT denom, quote_denom FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1) n ON true
		WHERE r.chain_id = ?0 AND r.height > ?1 AND r.height <= ?2 AND r.kind = 'rewards'
		GROUP BY 2
		ON CONFLICT (chain_id, day) DO UPDATE SET usdc = s.usdc + EXCLUDED.usdc, native = s.native + EXCLUDED.native`

	// The last-30-day window's rows per trader and market: ?3 the
	// window's first day after the run, ?4 before it. The window's sums
	// after the run are those before it, less the days that left it
	// (windowExpireSQL), plus the run's fills from ?4 on: the run's fills
	// of the days that left are in perp_trader_daily already (its job is
	// upstream), so adding them here and taking their days out there
	// leaves exactly the fills of the days from ?3 on. (Daily rows past ?2,
	// when that job is ahead, are on days from ?3 on: never taken out.) Every run costs its
	// own fills and the rows of the days that left, never the window.
	windowAddSQL = `INSERT INTO perp_trader_window_markets AS w (chain_id, address, perpetual_id, trades, volume_usdc, fees_usdc)
		SELECT ?0, address, perpetual_id, count(*), sum(notional) * 0.000001, sum(fee) * 0.000001
		FROM (` + fillsByTrader + `) f
		WHERE time >= ?4
		GROUP BY address, perpetual_id
		ON CONFLICT (chain_id, address, perpetual_id) DO UPDATE SET
			trades = w.trades + EXCLUDED.trades, volume_usdc = w.volume_usdc + EXCLUDED.volume_usdc,
			fees_usdc = w.fees_usdc + EXCLUDED.fees_usdc`

	windowExpireSQL = `INSERT INTO perp_trader_window_markets AS w (chain_id, address, perpetual_id, trades, volume_usdc, fees_usdc)
		SELECT ?0, address, perpetual_id, -sum(trades), -sum(volume_usdc), -sum(fees_usdc)
		FROM perp_trader_daily
		WHERE chain_id = ?0 AND day >= ?4 AND day < ?3
		GROUP BY address, perpetual_id
		ON CONFLICT (chain_id, address, perpetual_id) DO UPDATE SET
			trades = w.trades + EXCLUDED.trades, volume_usdc = w.volume_usdc + EXCLUDED.volume_usdc,
			fees_usdc = w.fees_usdc + EXCLUDED.fees_usdc`

	// The last-30-day fields of the traders whose window rows the run
	// changed (new fills, days that left), from those rows (a market
	// without fills left in the window loses its row), and, in the same
	// pass over their rows, their all-time top 3 markets by volume (ties:
	// lower perpetual id) from perp_trader_markets.
	last30dSQL = `WITH s AS (
			SELECT address FROM dydx_fills WHERE chain_id = ?0 AND height > ?1 AND height <= ?2
			UNION
			SELECT address FROM perp_trader_daily WHERE chain_id = ?0 AND day >= ?4 AND day < ?3
		), emptied AS (
			DELETE FROM perp_trader_window_markets w USING s WHERE w.chain_id = ?0 AND w.address = s.address AND w.trades = 0
		), a AS (
			SELECT w.address, sum(w.trades) AS trades, sum(w.volume_usdc) AS volume, sum(w.fees_usdc) AS fees,
				(array_agg(w.perpetual_id ORDER BY w.volume_usdc DESC, w.perpetual_id))[1:3] AS markets,
				(array_agg(w.volume_usdc ORDER BY w.volume_usdc DESC, w.perpetual_id))[1:3] AS volumes
			FROM perp_trader_window_markets w JOIN s ON s.address = w.address
			WHERE w.chain_id = ?0 AND w.trades > 0
			GROUP BY w.address
		), t AS (
			SELECT m.address, (array_agg(m.perpetual_id ORDER BY m.volume_usdc DESC, m.perpetual_id))[1:3] AS markets,
				(array_agg(m.volume_usdc ORDER BY m.volume_usdc DESC, m.perpetual_id))[1:3] AS volumes
			FROM perp_trader_markets m JOIN s ON s.address = m.address
			WHERE m.chain_id = ?0
			GROUP BY m.address
		)
		UPDATE perp_traders p SET last_30d_trades = coalesce(a.trades, 0), last_30d_volume_usdc = coalesce(a.volume, 0),
			last_30d_fees_usdc = coalesce(a.fees, 0), last_30d_top_markets = coalesce(a.markets, '{}'),
			last_30d_top_volumes = coalesce(a.volumes, '{}'),
			all_time_top_markets = coalesce(t.markets, p.all_time_top_markets), all_time_top_volumes = coalesce(t.volumes, p.all_time_top_volumes)
		FROM s LEFT JOIN a ON a.address = s.address LEFT JOIN t ON t.address = s.address
		WHERE p.chain_id = ?0 AND p.address = s.address`
)
