-- Governance, IBC, mint and distribution rows of the generic cosmos adapter.

CREATE TABLE gov_events (
    chain_id    text    NOT NULL,
    height      bigint  NOT NULL,
    tx_index    integer NOT NULL,
    event_index integer NOT NULL,
    coin_index  integer NOT NULL,
    msg_index   integer NOT NULL,
    kind        text    NOT NULL,  -- submit | deposit | vote | result
    proposal_id bigint  NOT NULL,
    address     text    NOT NULL,  -- proposer/depositor/voter ('' for results)
    detail      text    NOT NULL,  -- vote option(s) or proposal result
    denom       text    NOT NULL,
    amount      numeric NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index, coin_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX gov_events_proposal_idx ON gov_events (chain_id, proposal_id, height);

--bun:split

-- ICS-20 and other IBC packets as seen by this chain.
CREATE TABLE ibc_packets (
    chain_id          text    NOT NULL,
    height            bigint  NOT NULL,
    tx_index          integer NOT NULL,
    event_index       integer NOT NULL,
    msg_index         integer NOT NULL,
    kind              text    NOT NULL,  -- send | recv | ack | timeout
    src_port          text    NOT NULL,
    src_channel       text    NOT NULL,
    dst_port          text    NOT NULL,
    dst_channel       text    NOT NULL,
    sequence          bigint  NOT NULL,
    timeout_timestamp numeric NOT NULL,  -- ns since epoch, 0 when none
    denom             text    NOT NULL,  -- ICS-20 packet denom (sender-side path)
    amount            numeric NOT NULL,
    sender            text    NOT NULL,
    receiver          text    NOT NULL,
    success           boolean,           -- recv/ack outcome when the events say it
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX ibc_packets_channel_idx ON ibc_packets (chain_id, src_channel, dst_channel, sequence);

--bun:split

-- New IBC vouchers: ibc/<hash> -> trace.
CREATE TABLE ibc_denom_traces (
    chain_id    text    NOT NULL,
    height      bigint  NOT NULL,
    tx_index    integer NOT NULL,
    event_index integer NOT NULL,
    trace_hash  text    NOT NULL,
    denom       text    NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX ibc_denom_traces_hash_idx ON ibc_denom_traces (chain_id, trace_hash);

--bun:split

-- x/mint block provisions.
CREATE TABLE mint_events (
    chain_id          text    NOT NULL,
    height            bigint  NOT NULL,
    event_index       integer NOT NULL,
    bonded_ratio      numeric NOT NULL,
    inflation         numeric NOT NULL,
    annual_provisions numeric NOT NULL,
    amount            numeric NOT NULL,
    PRIMARY KEY (chain_id, height, event_index)
) PARTITION BY RANGE (height);

--bun:split

-- Per block totals of the distribution module's begin-block rewards and
-- commission over all validators (DecCoins, 18 decimals).
CREATE TABLE block_rewards (
    chain_id text    NOT NULL,
    height   bigint  NOT NULL,
    kind     text    NOT NULL,  -- rewards | commission | proposer_reward
    denom    text    NOT NULL,
    amount   numeric NOT NULL,
    PRIMARY KEY (chain_id, height, kind, denom)
) PARTITION BY RANGE (height);
