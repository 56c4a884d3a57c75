-- XION abstract accounts (chain-events.md §10), written by the xion
-- adapter from successful txs: every registered account
-- (abstractaccount.v1.EventAccountRegistered) and every authenticator an
-- account contract added or removed about itself.
CREATE TABLE xion_smart_accounts (
    chain_id        text    NOT NULL,
    height          bigint  NOT NULL,
    tx_index        integer NOT NULL,
    event_index     integer NOT NULL,
    account         text    NOT NULL,
    code_id         bigint  NOT NULL,
    account_number  text,
    creator         text    NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE TABLE xion_authenticator_changes (
    chain_id          text    NOT NULL,
    height            bigint  NOT NULL,
    tx_index          integer NOT NULL,
    event_index       integer NOT NULL,
    account           text    NOT NULL,
    action            text    NOT NULL CHECK (action IN ('add', 'remove')),
    authenticator_id  bigint  NOT NULL,
    auth_type         text,             -- add only
    authenticator     text,             -- add only
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);
