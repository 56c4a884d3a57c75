DROP INDEX events_type_idx;

--bun:split

CREATE INDEX events_type_idx ON events (chain_id, type, height);
