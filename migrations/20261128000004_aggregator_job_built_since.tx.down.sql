ALTER TABLE aggregator_jobs DROP COLUMN built_since;
