-- Versioned jobs: the version a job's rows were built with (NULL: built
-- before versions existed; the scheduler adopts the job's current version)
-- and the watermark its last run committed (a stored watermark below it was
-- reset from outside, which rebuilds the job's tables from scratch).
ALTER TABLE aggregator_jobs ADD COLUMN version text;
ALTER TABLE aggregator_jobs ADD COLUMN built_to bigint;
UPDATE aggregator_jobs SET built_to = watermark;
