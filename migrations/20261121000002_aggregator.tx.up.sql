-- One row per aggregator job: its watermark and the outcome of its last run.
CREATE TABLE aggregator_jobs (
    name            text PRIMARY KEY,
    watermark       bigint      NOT NULL DEFAULT 0,   -- job-defined: a height, a unix time...
    last_run_at     timestamptz,
    last_duration_ms bigint,
    last_rows       bigint,
    last_error      text
);
