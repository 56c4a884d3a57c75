-- One perp_trading job again, at the least advanced of the split jobs.
INSERT INTO aggregator_jobs (name, watermark, built_to, chain_id)
	SELECT 'perp_trading', min(watermark), min(built_to), min(chain_id) FROM aggregator_jobs
	WHERE name IN ('perp_market_hourly', 'perp_trader_daily', 'perp_trader_hourly', 'perp_traders',
		'perp_liquidations', 'perp_price_hourly', 'perp_deposits_hourly', 'perp_revenue_daily', 'perp_supply',
		'perp_staking_rewards_daily', 'perp_community_pool_spends', 'perp_validator_status', 'perp_positions',
		'perp_module_balances_daily', 'perp_rewards_daily', 'perp_validator_tokens_daily', 'perp_treasury_outflows_daily',
		'perp_buystake_hourly', 'perp_wallet_daily', 'perp_funding_ticks')
	HAVING count(*) > 0
ON CONFLICT (name) DO NOTHING;
DELETE FROM aggregator_jobs WHERE name IN ('perp_market_hourly', 'perp_trader_daily', 'perp_trader_hourly', 'perp_traders',
	'perp_liquidations', 'perp_price_hourly', 'perp_deposits_hourly', 'perp_revenue_daily', 'perp_supply',
	'perp_staking_rewards_daily', 'perp_community_pool_spends', 'perp_validator_status', 'perp_positions',
	'perp_module_balances_daily', 'perp_rewards_daily', 'perp_validator_tokens_daily', 'perp_treasury_outflows_daily',
	'perp_buystake_hourly', 'perp_wallet_daily', 'perp_funding_ticks');
