DROP TABLE IF EXISTS perp_module_balances_daily;
