DROP INDEX CONCURRENTLY IF EXISTS tracked_events_anonymous_utm_idx;
