-- When a pending tx hash of a website event was last looked up: each run
-- of engagement_website_conversions checks the pending events by the time
-- they were last looked at (checked, else received), oldest first, so more
-- pending events than one run checks take turns: newer ones no longer wait
-- for the oldest to time out, nor checked ones for a stream of new ones.
ALTER TABLE tracked_events ADD COLUMN tx_checked_at timestamptz;

--bun:split

DROP INDEX tracked_events_tx_pending_idx;

--bun:split

CREATE INDEX tracked_events_tx_pending_idx ON tracked_events ((coalesce(tx_checked_at, received_at)))
    WHERE tx_status IS NULL AND (attributes->>'tx_hash') IS NOT NULL;
