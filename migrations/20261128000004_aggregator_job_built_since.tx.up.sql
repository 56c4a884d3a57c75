-- When a job's current rows began: the run that started them from
-- watermark 0 (its first, or a rebuild). A job that follows another is
-- rebuilt when the one it follows began later than it did: its rows were
-- valued with rows that no longer exist. NULL: rows begun before this
-- was recorded.
ALTER TABLE aggregator_jobs ADD COLUMN built_since timestamptz;
