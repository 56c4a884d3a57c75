-- API keys: only a hash of the key is stored.
CREATE TABLE api_keys (
    id             bigserial PRIMARY KEY,
    name           text        NOT NULL,
    kind           text        NOT NULL CHECK (kind IN ('secret', 'publishable')),
    hint           text        NOT NULL,           -- first characters of the key, for humans
    hash           bytea       NOT NULL UNIQUE,    -- sha256 of the whole key
    scopes         text[]      NOT NULL,
    origins        text[]      NOT NULL DEFAULT '{}',
    quota_credits  bigint      NOT NULL CHECK (quota_credits > 0),
    quota_period_s bigint      NOT NULL CHECK (quota_period_s > 0),
    rate_per_sec   double precision NOT NULL,
    rate_burst     integer     NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    revoked_at     timestamptz
);

--bun:split

-- Credits consumed per key and quota period; incremented in batches by every API process.
CREATE TABLE api_key_usage (
    key_id       bigint      NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    period_start timestamptz NOT NULL,
    credits      bigint      NOT NULL DEFAULT 0,
    calls        bigint      NOT NULL DEFAULT 0,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (key_id, period_start)
);
