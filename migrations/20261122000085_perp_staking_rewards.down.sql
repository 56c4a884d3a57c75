DROP TABLE IF EXISTS perp_staking_rewards_daily;
