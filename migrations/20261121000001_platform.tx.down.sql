DROP TABLE IF EXISTS api_key_usage;
--bun:split
DROP TABLE IF EXISTS api_keys;
