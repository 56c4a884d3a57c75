DROP TABLE IF EXISTS osmosis_rewards_received_daily;
