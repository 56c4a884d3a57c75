ALTER TABLE genesis_imports DROP COLUMN state_height;

--bun:split

DROP TABLE state_import_delegations;

--bun:split

DROP TABLE state_import_balances;

--bun:split

DROP TABLE state_import_progress;
