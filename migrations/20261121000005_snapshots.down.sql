DROP INDEX IF EXISTS state_snapshots_taken_idx;
--bun:split
DROP INDEX IF EXISTS state_snapshots_kind_idx;
--bun:split
DROP TABLE IF EXISTS state_snapshots;
