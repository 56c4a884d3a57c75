-- The scheduler rebuilds a job whose watermark was reset from outside
-- (aggregator_jobs.built_to), which perp_report_state did for perp_trading
-- alone.
DROP TABLE perp_report_state;
