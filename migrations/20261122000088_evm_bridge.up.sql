-- CCTP v1 bridge flows of EVM chains (chain-events.md §11.6), written by
-- the EVM indexer in the same transaction as the block's token movements:
-- a DepositForBurn is an outflow to remote_domain, a MintAndWithdraw an
-- inflow from the domain of the MessageReceived before it in its tx (-1
-- when none was seen). Partitioned by height like erc20_transfers.
CREATE TABLE evm_bridge_transfers (
    chain_id       text    NOT NULL,
    height         bigint  NOT NULL,
    tx_hash        text    NOT NULL,
    log_index      integer NOT NULL,
    protocol       text    NOT NULL,  -- cctp
    direction      text    NOT NULL CHECK (direction IN ('in', 'out')),
    remote_domain  bigint  NOT NULL,
    token          text    NOT NULL,  -- burned or minted token, lower-case
    account        text    NOT NULL,  -- depositor or mint recipient
    amount         numeric NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (chain_id, height, log_index)
) PARTITION BY RANGE (height);
