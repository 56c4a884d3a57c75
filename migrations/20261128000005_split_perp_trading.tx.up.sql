-- The perp_trading job is split into one job per report table (see
-- report/perp). Each new job takes over where perp_trading stood: its
-- tables were built to that watermark, with the same rules (version NULL:
-- adopted as the job's current version), so nothing is aggregated twice.
INSERT INTO aggregator_jobs (name, watermark, built_to, version, chain_id, height, block_time, built_since,
		last_run_at, last_duration_ms, last_rows, last_error)
	SELECT j.name, p.watermark, p.built_to, NULL, p.chain_id, p.height, p.block_time, p.built_since,
		p.last_run_at, NULL, NULL, NULL
	FROM aggregator_jobs p
	CROSS JOIN unnest(ARRAY['perp_market_hourly', 'perp_trader_daily', 'perp_trader_hourly', 'perp_traders',
		'perp_liquidations', 'perp_price_hourly', 'perp_deposits_hourly', 'perp_revenue_daily', 'perp_supply',
		'perp_staking_rewards_daily', 'perp_community_pool_spends', 'perp_validator_status', 'perp_positions',
		'perp_module_balances_daily', 'perp_rewards_daily', 'perp_validator_tokens_daily', 'perp_treasury_outflows_daily',
		'perp_buystake_hourly', 'perp_wallet_daily', 'perp_funding_ticks']) AS j(name)
	WHERE p.name = 'perp_trading'
ON CONFLICT (name) DO NOTHING;
DELETE FROM aggregator_jobs WHERE name = 'perp_trading';
