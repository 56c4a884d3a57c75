DROP TABLE IF EXISTS osmosis_cl_open_positions;
DROP TABLE IF EXISTS osmosis_pool_shares;
DROP TABLE IF EXISTS osmosis_lp_holdings;
