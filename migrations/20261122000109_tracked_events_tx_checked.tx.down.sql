DROP INDEX tracked_events_tx_pending_idx;

--bun:split

CREATE INDEX tracked_events_tx_pending_idx ON tracked_events (received_at)
    WHERE tx_status IS NULL AND (attributes->>'tx_hash') IS NOT NULL;

--bun:split

ALTER TABLE tracked_events DROP COLUMN IF EXISTS tx_checked_at;
