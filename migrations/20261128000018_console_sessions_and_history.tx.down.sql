DROP TABLE campaign_report_days;

--bun:split

DROP TABLE console_samples;

--bun:split

DROP TABLE console_sessions;
