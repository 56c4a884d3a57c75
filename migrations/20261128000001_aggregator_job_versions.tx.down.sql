ALTER TABLE aggregator_jobs DROP COLUMN built_to;
ALTER TABLE aggregator_jobs DROP COLUMN version;
