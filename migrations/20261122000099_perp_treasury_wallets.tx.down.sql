DROP TABLE IF EXISTS perp_tracked_wallets;
DROP TABLE IF EXISTS perp_wallet_daily;
