DROP TABLE IF EXISTS perp_treasury_outflows_daily;
