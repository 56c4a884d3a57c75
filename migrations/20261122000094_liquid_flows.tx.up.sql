-- Liquid-staking flows of the configured providers on the Cosmos Hub, one
-- row per flow, built by the liquid_staking job (aggregator/liquidstaking)
-- from the events of successful txs: in = the provider delegated
-- (delegate) or redeemed share tokens into a delegation (redeem_shares);
-- out = it undelegated (unbond) or tokenized a delegation
-- (tokenize_shares). amount in the bond denom's base units (share tokens
-- at face value).
CREATE TABLE liquid_flows (
    chain_id     text        NOT NULL,
    height       bigint      NOT NULL,
    tx_index     integer     NOT NULL,
    event_index  integer     NOT NULL,
    time         timestamptz NOT NULL,
    tx_hash      text        NOT NULL,
    provider     text        NOT NULL,
    direction    text        NOT NULL CHECK (direction IN ('in', 'out')),
    kind         text        NOT NULL,
    amount       numeric     NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index)
);

--bun:split

CREATE INDEX liquid_flows_time_idx ON liquid_flows (chain_id, time);
