-- Report tables of the stablecoin group, built per EVM chain by the
-- stablecoins:<chain> job (aggregator/stablecoins) from erc20_transfers and
-- evm_bridge_transfers. Amounts are USD (token amount × configured price).
-- minute = the UTC minute of the block time.
CREATE TABLE stablecoin_minute (
    chain_id    text        NOT NULL,
    token       text        NOT NULL,
    minute      timestamptz NOT NULL,
    minted_usd  numeric     NOT NULL,
    burned_usd  numeric     NOT NULL,
    volume_usd  numeric     NOT NULL,  -- transfers between two non-zero addresses
    transfers   bigint      NOT NULL,
    PRIMARY KEY (chain_id, minute, token)
);

--bun:split

-- Distinct senders of transfers per token and minute.
CREATE TABLE stablecoin_senders_minute (
    chain_id  text        NOT NULL,
    token     text        NOT NULL,
    minute    timestamptz NOT NULL,
    sender    text        NOT NULL,
    PRIMARY KEY (chain_id, minute, token, sender)
);

--bun:split

-- Per counterparty category: value received (inflow) and sent (outflow) by
-- addresses of the category (the zero address is mint_burn: it "sends"
-- mints and "receives" burns), and the volume of the movements attributed
-- to it (a mint or burn to mint_burn, else the receiver's category when it
-- is labelled, else the sender's).
CREATE TABLE stablecoin_category_minute (
    chain_id     text        NOT NULL,
    token        text        NOT NULL,
    minute       timestamptz NOT NULL,
    category     text        NOT NULL,
    inflow_usd   numeric     NOT NULL,
    outflow_usd  numeric     NOT NULL,
    volume_usd   numeric     NOT NULL,
    PRIMARY KEY (chain_id, minute, token, category)
);

--bun:split

-- Single movements (transfers, mints, burns) of at least 1,000,000 USD.
CREATE TABLE stablecoin_whales (
    chain_id    text        NOT NULL,
    height      bigint      NOT NULL,
    log_index   integer     NOT NULL,
    time        timestamptz NOT NULL,
    tx_hash     text        NOT NULL,
    token       text        NOT NULL,
    sender      text        NOT NULL,
    recipient   text        NOT NULL,
    amount_usd  numeric     NOT NULL,
    PRIMARY KEY (chain_id, height, log_index)
);

--bun:split

CREATE INDEX stablecoin_whales_time_idx ON stablecoin_whales (time DESC);

--bun:split

-- Bridge flows seen on chain_id: out = leaving it for remote_chain, in =
-- arriving from it; remote_chain '' when the other side is not known (a
-- transfer into or out of a bridge-labelled escrow address).
CREATE TABLE stablecoin_bridge_minute (
    chain_id      text        NOT NULL,
    token         text        NOT NULL,
    minute        timestamptz NOT NULL,
    direction     text        NOT NULL CHECK (direction IN ('in', 'out')),
    remote_chain  text        NOT NULL,
    amount_usd    numeric     NOT NULL,
    flows         bigint      NOT NULL,
    PRIMARY KEY (chain_id, minute, token, direction, remote_chain)
);

--bun:split

-- What each chain's reports were built from: the last aggregated block
-- (its hash detects a reorg below the watermark) and a fingerprint of the
-- config the USD values and categories came from (a change rebuilds).
CREATE TABLE stablecoin_report_state (
    chain_id     text   PRIMARY KEY,
    height       bigint NOT NULL,
    block_hash   text   NOT NULL,
    fingerprint  text   NOT NULL
);
