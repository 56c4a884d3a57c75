-- utm attribution: a campaign may declare the utm values of its links
-- (/click adds them to the target URL); a website event's utm values (its
-- meta.campaign, else the landing page URL's utm_* parameters) are kept to
-- attribute conversions to the campaign whose values they carry. Nullable
-- columns: no table is rewritten.
ALTER TABLE campaigns ADD COLUMN utm_campaign text, ADD COLUMN utm_source text, ADD COLUMN utm_medium text;
ALTER TABLE tracked_events ADD COLUMN utm_campaign text, ADD COLUMN utm_source text, ADD COLUMN utm_medium text;
ALTER TABLE conversions DROP CONSTRAINT conversions_attribution_check,
    ADD CONSTRAINT conversions_attribution_check CHECK (attribution IN ('click', 'impression', 'utm'));
