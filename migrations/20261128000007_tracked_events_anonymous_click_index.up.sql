-- The click id an anonymous visitor's earlier event carried, for its later
-- events without one (website attribution): only events with a click id
-- and an anonymous id are indexed. Built without blocking /track.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tracked_events_anonymous_click_idx ON tracked_events (anonymous_id, timestamp)
    WHERE click_id IS NOT NULL AND anonymous_id IS NOT NULL;
