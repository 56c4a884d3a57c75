DROP TABLE IF EXISTS tracked_event_dedupe;
--bun:split
DROP TABLE IF EXISTS tracked_events;
--bun:split
DROP TABLE IF EXISTS clicks;
--bun:split
DROP TABLE IF EXISTS impressions;
--bun:split
DROP TABLE IF EXISTS creatives;
--bun:split
DROP TABLE IF EXISTS campaign_audiences;
--bun:split
DROP TABLE IF EXISTS audience_members;
--bun:split
DROP TABLE IF EXISTS audiences;
--bun:split
DROP TABLE IF EXISTS campaigns;
--bun:split
DROP TABLE IF EXISTS engagement_secrets;
--bun:split
DROP TABLE IF EXISTS engagement_positions;
