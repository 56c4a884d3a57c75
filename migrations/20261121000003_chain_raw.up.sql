-- Checkpoint of each indexed chain: every height below next_height is either
-- indexed or in dead_letters. Written in the same transaction as the rows.
CREATE TABLE sync_state (
    chain_id     text PRIMARY KEY,
    kind         text        NOT NULL,
    next_height  bigint      NOT NULL,
    last_time    timestamptz,          -- block time of next_height - 1
    tip_height   bigint,               -- node tip seen at the last commit
    updated_at   timestamptz NOT NULL DEFAULT now()
);

--bun:split

-- Heights that kept failing; retried later, removed once indexed.
CREATE TABLE dead_letters (
    chain_id        text        NOT NULL,
    height          bigint      NOT NULL,
    attempts        integer     NOT NULL,
    last_error      text        NOT NULL,
    first_failed_at timestamptz NOT NULL DEFAULT now(),
    last_failed_at  timestamptz NOT NULL DEFAULT now(),
    next_retry_at   timestamptz NOT NULL,
    PRIMARY KEY (chain_id, height)
);

--bun:split

-- Raw tables, range-partitioned by height (partitions are created on demand
-- by the indexer, one per million heights). Rewriting a height deletes its
-- rows first, so writes are idempotent.
CREATE TABLE blocks (
    chain_id  text        NOT NULL,
    height    bigint      NOT NULL,
    hash      text        NOT NULL,
    time      timestamptz NOT NULL,
    proposer  text        NOT NULL,
    app_hash  text        NOT NULL,
    num_txs   integer     NOT NULL,
    PRIMARY KEY (chain_id, height)
) PARTITION BY RANGE (height);

--bun:split

CREATE TABLE txs (
    chain_id     text     NOT NULL,
    height       bigint   NOT NULL,
    tx_index     integer  NOT NULL,
    hash         text     NOT NULL,
    code         bigint   NOT NULL,
    codespace    text     NOT NULL,
    log          text     NOT NULL,
    gas_wanted   bigint   NOT NULL,
    gas_used     bigint   NOT NULL,
    undecodable  boolean  NOT NULL,
    memo         text     NOT NULL,
    fee          jsonb    NOT NULL,   -- [{denom, amount}]
    fee_payer    text     NOT NULL,
    signers      text[]   NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE TABLE messages (
    chain_id   text    NOT NULL,
    height     bigint  NOT NULL,
    tx_index   integer NOT NULL,
    msg_index  integer NOT NULL,
    type_url   text    NOT NULL,
    body       jsonb,              -- proto3 JSON when the kind knows the type
    raw        bytea,              -- protobuf bytes otherwise
    PRIMARY KEY (chain_id, height, tx_index, msg_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE TABLE events (
    chain_id    text    NOT NULL,
    height      bigint  NOT NULL,
    tx_index    integer NOT NULL,  -- -1 for block-level events
    event_index integer NOT NULL,
    msg_index   integer NOT NULL,  -- -1 when the event has none
    mode        text    NOT NULL,  -- BeginBlock, EndBlock or ''
    type        text    NOT NULL,
    attributes  jsonb   NOT NULL,  -- [{key, value}] in order
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX txs_hash_idx ON txs (hash);

--bun:split

CREATE INDEX messages_type_idx ON messages (chain_id, type_url, height);

--bun:split

CREATE INDEX events_type_idx ON events (chain_id, type, height);
