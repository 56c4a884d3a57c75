-- When a pending tx hash of a website event was last looked up: each run
-- of engagement_website_conversions checks the least recently checked
-- pending events first, so more pending events than one run checks no
-- longer starve the newer ones (they waited for the oldest to time out).
ALTER TABLE tracked_events ADD COLUMN tx_checked_at timestamptz;

--bun:split

DROP INDEX tracked_events_tx_pending_idx;

--bun:split

CREATE INDEX tracked_events_tx_pending_idx ON tracked_events (tx_checked_at NULLS FIRST, received_at)
    WHERE tx_status IS NULL AND (attributes->>'tx_hash') IS NOT NULL;
