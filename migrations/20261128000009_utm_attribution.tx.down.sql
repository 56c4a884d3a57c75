DELETE FROM conversions WHERE attribution = 'utm';
ALTER TABLE conversions DROP CONSTRAINT conversions_attribution_check,
    ADD CONSTRAINT conversions_attribution_check CHECK (attribution IN ('click', 'impression'));
ALTER TABLE tracked_events DROP COLUMN utm_campaign, DROP COLUMN utm_source, DROP COLUMN utm_medium;
ALTER TABLE campaigns DROP COLUMN utm_campaign, DROP COLUMN utm_source, DROP COLUMN utm_medium;
