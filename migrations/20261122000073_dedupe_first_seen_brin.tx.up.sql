-- The dedupe claims' first_seen index serves only the hourly prune of
-- claims older than twice the window. Claims are inserted in time order,
-- so a BRIN index finds the old ones as well, and costs /track almost
-- nothing per event (the btree was one more index insert per event).
DROP INDEX tracked_event_dedupe_first_seen_idx;

--bun:split

CREATE INDEX tracked_event_dedupe_first_seen_idx ON tracked_event_dedupe USING brin (first_seen);
