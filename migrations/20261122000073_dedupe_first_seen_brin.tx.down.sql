DROP INDEX tracked_event_dedupe_first_seen_idx;

--bun:split

CREATE INDEX tracked_event_dedupe_first_seen_idx ON tracked_event_dedupe (first_seen);
