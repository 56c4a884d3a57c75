DROP TABLE IF EXISTS perp_community_pool_spends;
