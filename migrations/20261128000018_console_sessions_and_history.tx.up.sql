-- The operator console (/console): login sessions of admin keys, and the
-- history behind its charts.

-- A session is created by logging in with a secret key of the admin scope.
-- Only the token's hash is stored: the session ends at expires_at, at
-- logout, or as soon as its key is revoked (the key is checked on every
-- request). csrf is the token state-changing requests must send back in a
-- header (the cookie alone is never enough).
CREATE TABLE console_sessions (
    token_hash bytea       PRIMARY KEY,
    key_id     bigint      NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    csrf       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);

--bun:split

CREATE INDEX console_sessions_expiry_idx ON console_sessions (expires_at);

--bun:split

-- Every process samples its own Prometheus series here every
-- console.sample_every (at is aligned to it, so the samples of several
-- processes line up) and deletes the samples older than console.keep_for:
-- the table's size is bounded by the number of series times keep_for /
-- sample_every. instance tells processes apart (counters restart with
-- their process). Values are Prometheus's own (floats), for charts only.
CREATE TABLE console_samples (
    metric   text             NOT NULL,   -- chainlens_indexer_blocks_total
    labels   text             NOT NULL,   -- {chain="osmosis-1"}, sorted by name; {} without labels
    at       timestamptz      NOT NULL,
    instance text             NOT NULL,
    value    double precision NOT NULL,
    PRIMARY KEY (metric, at, instance, labels)
);

--bun:split

CREATE INDEX console_samples_at_idx ON console_samples (at);

--bun:split

-- A campaign's report per UTC day (the engagement_report_days job), for
-- the console's charts: the same counts as campaign_reports, by the day
-- each impression, click or conversion happened.
CREATE TABLE campaign_report_days (
    campaign_id          bigint  NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    day                  date    NOT NULL,
    impressions          bigint  NOT NULL,
    clicks               bigint  NOT NULL,
    website_conversions  bigint  NOT NULL,
    onchain_conversions  bigint  NOT NULL,
    conversion_value_usd numeric NOT NULL,
    PRIMARY KEY (campaign_id, day)
);
