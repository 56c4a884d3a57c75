DROP TABLE IF EXISTS aggregator_jobs;
