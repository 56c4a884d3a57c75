DROP TABLE IF EXISTS balance_changes;
--bun:split
DROP TABLE IF EXISTS staking_events;
--bun:split
DROP TABLE IF EXISTS transfers;
