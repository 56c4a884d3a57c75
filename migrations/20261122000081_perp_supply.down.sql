DROP TABLE IF EXISTS perp_supply;
