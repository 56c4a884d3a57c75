DROP TABLE IF EXISTS osmosis_superfluid_intermediaries;
DROP TABLE IF EXISTS osmosis_superfluid_locks;
DROP TABLE IF EXISTS osmosis_superfluid_assets;
DROP TABLE IF EXISTS osmosis_cl_pools;
DROP TABLE IF EXISTS osmosis_lock_rewards_hourly;
DROP TABLE IF EXISTS osmosis_pool_rewards_hourly;
