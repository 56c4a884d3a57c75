-- Interchain-security rewards the Hub received from its consumer chains
-- (chain-events.md §8.3), one row per received_ics_rewards event (or the
-- update_consumer event that carried the same attributes before it) of a
-- successful tx, written by the ics_rewards job. denom is the Hub-side
-- denom the provider module names; base_denom is the token's base denom,
-- read from the path of the ICS-20 packet the rewards arrived in ('' when
-- the tx holds no such packet); amount in base units.
CREATE TABLE ics_rewards (
    chain_id          text        NOT NULL,
    height            bigint      NOT NULL,
    tx_index          integer     NOT NULL,
    event_index       integer     NOT NULL,
    time              timestamptz NOT NULL,
    consumer_id       text        NOT NULL,
    consumer_chain_id text        NOT NULL,
    denom             text        NOT NULL,
    base_denom        text        NOT NULL,
    amount            numeric     NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
);

--bun:split

CREATE INDEX ics_rewards_time_idx ON ics_rewards (chain_id, time);

--bun:split

-- The dex chain's denom of each rewarded token, for its USD price: the
-- token's base denom when the dex chain prices it natively, else the one
-- voucher of it that the dex chain received and prices (ICS-20 voucher =
-- ibc/SHA-256(port/channel/base)). Written by the ics_rewards job once the
-- match is unique; a token with none or several candidates stays out.
CREATE TABLE ics_reward_denoms (
    chain_id     text NOT NULL,
    base_denom   text NOT NULL,
    dex_chain_id text NOT NULL,
    dex_denom    text NOT NULL,
    PRIMARY KEY (chain_id, base_denom, dex_chain_id)
);

--bun:split

-- Receipts of a denom (sender-side path) on a chain: where a token arrives.
CREATE INDEX ibc_packets_recv_denom_idx ON ibc_packets (chain_id, denom) WHERE kind = 'recv';
