-- EVM chains (chain-events.md §11): every indexed block's header, for reorg
-- detection (a new block's parent_hash must equal the stored hash of the
-- height below), and the ERC-20 movements of the configured tokens. Both are
-- range-partitioned by height like the cosmos tables (partitions are created
-- on demand by the indexer); rewriting a height range deletes it first.
CREATE TABLE evm_blocks (
    chain_id     text        NOT NULL,
    height       bigint      NOT NULL,
    hash         text        NOT NULL,  -- lower-case 0x hex
    parent_hash  text        NOT NULL,
    time         timestamptz NOT NULL,
    PRIMARY KEY (chain_id, height)
) PARTITION BY RANGE (height);

--bun:split

-- Transfer logs, plus the TetherToken events that change the supply
-- without a Transfer (Issue = mint to the owner, Redeem = burn from the
-- owner, DestroyedBlackFunds = burn). A mint's sender and a burn's recipient
-- is the zero address. Addresses are lower-case 0x hex.
CREATE TABLE erc20_transfers (
    chain_id   text    NOT NULL,
    height     bigint  NOT NULL,
    tx_hash    text    NOT NULL,
    log_index  integer NOT NULL,
    token      text    NOT NULL,  -- contract address
    sender     text    NOT NULL,
    recipient  text    NOT NULL,
    amount     numeric NOT NULL CHECK (amount >= 0),  -- uint256 in base units
    kind       text    NOT NULL CHECK (kind IN ('transfer', 'mint', 'burn')),
    PRIMARY KEY (chain_id, height, log_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX erc20_transfers_token_idx ON erc20_transfers (token, chain_id, height);

--bun:split

CREATE INDEX erc20_transfers_sender_idx ON erc20_transfers (sender, chain_id, height);

--bun:split

CREATE INDEX erc20_transfers_recipient_idx ON erc20_transfers (recipient, chain_id, height);
