-- Conversion goals of campaigns, the conversions the engagement jobs
-- attribute to them, and the per-campaign report.

-- A goal is either a /track event name (kind event) or an on-chain action
-- on an indexed chain (kind onchain): a message type, a contract (a wasm
-- contract executed, or an ERC-20 token moved on an EVM chain) or an event
-- type, optionally with a denom and a minimum amount sent by the wallet.
CREATE TABLE campaign_goals (
    id          bigserial PRIMARY KEY,
    campaign_id bigint    NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    kind        text      NOT NULL CHECK (kind IN ('event', 'onchain')),
    event_name  text,     -- kind event
    chain_id    text,     -- kind onchain
    msg_type    text,
    contract    text,
    event_type  text,
    denom       text,
    min_amount  numeric   CHECK (min_amount >= 0),
    scanned_height bigint,  -- onchain: the conversions job has matched heights up to here (NULL: not started)
    CHECK ((kind = 'event') = (event_name IS NOT NULL)),
    CHECK ((kind = 'onchain') = (chain_id IS NOT NULL))
);
CREATE INDEX campaign_goals_campaign_idx ON campaign_goals (campaign_id);

--bun:split

-- One row per attributed conversion. source_key identifies the converting
-- action so a rerun writes nothing twice: chain:tx_hash:msg_index (or
-- chain:tx_hash:log_index on EVM chains) for on-chain actions, the event id
-- for website events.
CREATE TABLE conversions (
    campaign_id  bigint      NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    goal_id      bigint      NOT NULL REFERENCES campaign_goals (id) ON DELETE CASCADE,
    source_key   text        NOT NULL,
    source       text        NOT NULL CHECK (source IN ('onchain', 'website')),
    address_norm text        NOT NULL,   -- engagement.Normalize form
    attribution  text        NOT NULL CHECK (attribution IN ('click', 'impression')),
    exposed_at   timestamptz NOT NULL,   -- the last view or click before the conversion
    converted_at timestamptz NOT NULL,   -- block time, or the event's timestamp
    chain_id     text,
    tx_hash      text,
    height       bigint,
    event_id     text,                   -- website conversions
    verified     boolean     NOT NULL DEFAULT false,  -- on-chain, or a website event whose tx hash was found indexed
    denom        text,
    amount       numeric,                -- base units of denom sent by the wallet in the action
    value_usd    numeric,                -- NULL when no price is known
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (campaign_id, goal_id, source_key)
);
CREATE INDEX conversions_address_idx ON conversions (address_norm, converted_at);

--bun:split

-- Website events: attributed once by the engagement_website_conversions job
-- (attributed_at), and a tx hash they carry (attributes.tx_hash) checked
-- against the indexed chains: tx_status verified (found, succeeded, signed
-- by the event's identity), signer_mismatch, failed or not_found (after the
-- lookup window).
ALTER TABLE tracked_events
    ADD COLUMN attributed_at timestamptz,
    ADD COLUMN tx_status     text CHECK (tx_status IN ('verified', 'signer_mismatch', 'failed', 'not_found')),
    ADD COLUMN tx_chain_id   text,
    ADD COLUMN tx_height     bigint;
-- tx hashes of website events are looked up on EVM chains too.
CREATE INDEX erc20_transfers_tx_hash_idx ON erc20_transfers (tx_hash);

--bun:split

CREATE INDEX tracked_events_unattributed_idx ON tracked_events (received_at) WHERE attributed_at IS NULL;
CREATE INDEX tracked_events_tx_pending_idx ON tracked_events (received_at)
    WHERE tx_status IS NULL AND (attributes->>'tx_hash') IS NOT NULL;

--bun:split

-- Rule audiences: when the job last materialised the members.
ALTER TABLE audiences ADD COLUMN refreshed_at timestamptz;

--bun:split

-- The per-campaign report, rebuilt by the engagement_reports job.
CREATE TABLE campaign_reports (
    campaign_id          bigint      PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
    impressions          bigint      NOT NULL,
    clicks               bigint      NOT NULL,
    website_conversions  bigint      NOT NULL,
    onchain_conversions  bigint      NOT NULL,
    conversion_value_usd numeric     NOT NULL,
    unique_wallets       bigint      NOT NULL,   -- distinct wallets that saw or clicked the campaign
    converting_wallets   bigint      NOT NULL,
    retention_7d         numeric,    -- share of converting wallets (first conversion >= 7 days ago) active again 7+ days later
    retention_30d        numeric,
    computed_at          timestamptz NOT NULL
);
