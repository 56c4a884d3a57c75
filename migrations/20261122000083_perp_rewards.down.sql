DROP TABLE IF EXISTS perp_rewards_daily;
