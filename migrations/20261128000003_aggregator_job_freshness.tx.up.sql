-- What a job's rows reach, recorded by the scheduler in the job's own
-- transaction: the chain it aggregates, and the last indexed block at or
-- below its watermark with its time. An answer's freshness is read here.
ALTER TABLE aggregator_jobs ADD COLUMN chain_id text;
ALTER TABLE aggregator_jobs ADD COLUMN height bigint;
ALTER TABLE aggregator_jobs ADD COLUMN block_time timestamptz;
