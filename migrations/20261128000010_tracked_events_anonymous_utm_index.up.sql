-- The utm values an anonymous visitor's earlier event carried (the landing
-- page), for its later events without them. Built without blocking /track.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tracked_events_anonymous_utm_idx ON tracked_events (anonymous_id, timestamp)
    WHERE utm_campaign IS NOT NULL AND anonymous_id IS NOT NULL;
