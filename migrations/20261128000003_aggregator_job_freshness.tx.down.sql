ALTER TABLE aggregator_jobs DROP COLUMN block_time;
ALTER TABLE aggregator_jobs DROP COLUMN height;
ALTER TABLE aggregator_jobs DROP COLUMN chain_id;
