DROP TABLE campaign_reports;
ALTER TABLE audiences DROP COLUMN refreshed_at;
DROP INDEX tracked_events_tx_pending_idx;
DROP INDEX tracked_events_unattributed_idx;
DROP INDEX erc20_transfers_tx_hash_idx;
ALTER TABLE tracked_events DROP COLUMN attributed_at, DROP COLUMN tx_status, DROP COLUMN tx_chain_id, DROP COLUMN tx_height;
DROP TABLE conversions;
DROP TABLE campaign_goals;
