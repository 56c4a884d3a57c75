-- Engagement: campaigns selected for wallets, their views (impressions) and
-- clicks, and the conversion events posted to /track and /sdk/track.
-- Addresses used for matching are normalised (engagement.Normalize): the
-- raw bytes of a bech32 address or of a 0x EVM address, as lower-case hex,
-- so one key matches across bech32 prefixes. IPs are stored only hashed.

-- Placements a creative can be shown in (position_id); an unknown one is a 400.
CREATE TABLE engagement_positions (
    id         text        PRIMARY KEY CHECK (id <> ''),
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO engagement_positions (id) VALUES
    ('keplr_home'), ('keplr_explore'), ('leap_wallet_home'), ('leap_mobile_wallet_home'),
    ('the_crypto_app_home'), ('soquest_campaign_home_suggest'), ('jumper_home'),
    ('staking_rewards_home'), ('wallet_home');

--bun:split

-- Per-installation secret that salts the IP hashes of clicks.
CREATE TABLE engagement_secrets (
    name  text  PRIMARY KEY,
    value bytea NOT NULL
);
INSERT INTO engagement_secrets (name, value)
VALUES ('ip_salt', decode(md5(random()::text || clock_timestamp()::text) || md5(gen_random_uuid()::text), 'hex'));

--bun:split

CREATE TABLE campaigns (
    id                   bigserial   PRIMARY KEY,
    owner                text        NOT NULL,
    name                 text        NOT NULL,
    topic                text        NOT NULL DEFAULT '',
    start_date           timestamptz NOT NULL,
    end_date             timestamptz NOT NULL,
    status               text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
    priority             integer     NOT NULL DEFAULT 0,
    impression_budget    bigint      CHECK (impression_budget >= 0),   -- NULL = unlimited
    click_budget         bigint      CHECK (click_budget >= 0),        -- NULL = unlimited
    frequency_cap        integer     CHECK (frequency_cap > 0),        -- views per address per UTC day; NULL = none
    attribution_window_s bigint      NOT NULL DEFAULT 604800 CHECK (attribution_window_s > 0),
    impressions          bigint      NOT NULL DEFAULT 0,               -- counters checked against the budgets
    clicks               bigint      NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CHECK (start_date < end_date)
);
CREATE INDEX campaigns_active_idx ON campaigns (end_date) WHERE status = 'active';

--bun:split

CREATE TABLE audiences (
    id         bigserial   PRIMARY KEY,
    name       text        NOT NULL UNIQUE,
    kind       text        NOT NULL CHECK (kind IN ('global', 'addresses', 'rule')),
    rule       jsonb,      -- for kind rule: evaluated by a job that fills audience_members
    created_at timestamptz NOT NULL DEFAULT now()
);

--bun:split

CREATE TABLE audience_members (
    audience_id bigint NOT NULL REFERENCES audiences (id) ON DELETE CASCADE,
    address     text   NOT NULL,   -- normalised
    PRIMARY KEY (audience_id, address)
);
CREATE INDEX audience_members_address_idx ON audience_members (address);

--bun:split

CREATE TABLE campaign_audiences (
    campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    audience_id bigint NOT NULL REFERENCES audiences (id) ON DELETE CASCADE,
    PRIMARY KEY (campaign_id, audience_id)
);
CREATE INDEX campaign_audiences_audience_idx ON campaign_audiences (audience_id);

--bun:split

CREATE TABLE creatives (
    campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    position_id text   NOT NULL REFERENCES engagement_positions (id),
    logo        text   NOT NULL DEFAULT '',
    title       text   NOT NULL DEFAULT '',
    body        text   NOT NULL DEFAULT '',
    cta         text   NOT NULL DEFAULT '',
    url         text   NOT NULL CHECK (url ~ '^https?://'),
    banner_url  text,  -- NULL for text-only ads
    PRIMARY KEY (campaign_id, position_id)
);
CREATE INDEX creatives_position_idx ON creatives (position_id);

--bun:split

-- One row per campaign returned by /campaign (one view).
CREATE TABLE impressions (
    id           bigserial   PRIMARY KEY,
    campaign_id  bigint      NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    audience_id  bigint      NOT NULL,
    position_id  text        NOT NULL,
    address      text        NOT NULL,   -- as answered: the matched address, or global
    address_norm text        NOT NULL,   -- normalised user address counted by the frequency cap; '' for global
    key_id       bigint,
    shown_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX impressions_cap_idx ON impressions (campaign_id, address_norm, shown_at);

--bun:split

CREATE TABLE clicks (
    click_id     text        PRIMARY KEY,
    campaign_id  bigint      NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    audience_id  bigint      NOT NULL,
    position_id  text        NOT NULL,
    address      text        NOT NULL,   -- as sent
    address_norm text        NOT NULL,
    url          text        NOT NULL,
    ip_hash      bytea       NOT NULL,   -- sha256(salt || ip); the IP itself is never stored
    user_agent   text        NOT NULL DEFAULT '',
    referrer     text        NOT NULL DEFAULT '',
    clicked_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX clicks_dedupe_idx ON clicks (campaign_id, address_norm, ip_hash, clicked_at);

--bun:split

-- Conversion events of POST /track (source track) and POST /sdk/track (source sdk).
CREATE TABLE tracked_events (
    id                 text        PRIMARY KEY,   -- evt_<ulid>
    key_id             bigint,                    -- API key that sent it; NULL for a public group
    source             text        NOT NULL CHECK (source IN ('track', 'sdk')),
    name               text        NOT NULL,
    identity_type      text        NOT NULL,      -- address, or anonymous for SDK events without userId
    identity_id        text        NOT NULL,
    identity_canonical text,
    identity_norm      text        NOT NULL DEFAULT '',  -- normalised address when it parses
    anonymous_id       text,
    click_id           text,                      -- meta.click_id, links a click
    attributes         jsonb       NOT NULL DEFAULT '{}',
    meta               jsonb       NOT NULL DEFAULT '{}',
    timestamp          timestamptz NOT NULL,
    received_at        timestamptz NOT NULL DEFAULT now(),
    dedupe_key         text        NOT NULL
);
CREATE INDEX tracked_events_name_time_idx ON tracked_events (name, timestamp);
CREATE INDEX tracked_events_identity_idx ON tracked_events (identity_norm, timestamp);
CREATE INDEX tracked_events_click_idx ON tracked_events (click_id) WHERE click_id IS NOT NULL;

--bun:split

-- The 24 h deduplication window: one row per (key, dedupe key) naming the
-- first event seen with it. A row older than 24 h is taken over by the next
-- event with the same key (ON CONFLICT ... WHERE first_seen is stale), so the
-- unique key holds per window without a sweeper; old rows may be pruned.
CREATE TABLE tracked_event_dedupe (
    key_id     bigint      NOT NULL,   -- 0 when no API key
    dedupe_key text        NOT NULL,
    event_id   text        NOT NULL,
    first_seen timestamptz NOT NULL,
    PRIMARY KEY (key_id, dedupe_key)
);
CREATE INDEX tracked_event_dedupe_first_seen_idx ON tracked_event_dedupe (first_seen);
