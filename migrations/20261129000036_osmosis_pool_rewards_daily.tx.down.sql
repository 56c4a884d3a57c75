DROP TABLE IF EXISTS osmosis_pool_rewards_daily;
