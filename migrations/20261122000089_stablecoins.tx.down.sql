DROP TABLE IF EXISTS stablecoin_report_state;
DROP TABLE IF EXISTS stablecoin_bridge_minute;
DROP TABLE IF EXISTS stablecoin_whales;
DROP TABLE IF EXISTS stablecoin_category_minute;
DROP TABLE IF EXISTS stablecoin_senders_minute;
DROP TABLE IF EXISTS stablecoin_minute;
