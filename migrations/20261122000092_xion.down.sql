DROP TABLE IF EXISTS xion_authenticator_changes;
--bun:split
DROP TABLE IF EXISTS xion_smart_accounts;
