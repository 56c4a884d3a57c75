-- Domain rows of the generic cosmos adapter (every cosmos chain kind).

-- Bank movements: transfer (sender -> recipient), coinbase (minted), burn.
CREATE TABLE transfers (
    chain_id    text    NOT NULL,
    height      bigint  NOT NULL,
    tx_index    integer NOT NULL,
    event_index integer NOT NULL,
    coin_index  integer NOT NULL,  -- position of the coin in a multi-coin amount
    msg_index   integer NOT NULL,
    kind        text    NOT NULL,  -- transfer | coinbase | burn
    sender      text    NOT NULL,  -- '' for coinbase
    recipient   text    NOT NULL,  -- '' for burn
    denom       text    NOT NULL,
    amount      numeric NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index, coin_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX transfers_sender_idx ON transfers (sender, chain_id, height);

--bun:split

CREATE INDEX transfers_recipient_idx ON transfers (recipient, chain_id, height);

--bun:split

-- Staking and distribution actions.
CREATE TABLE staking_events (
    chain_id      text    NOT NULL,
    height        bigint  NOT NULL,
    tx_index      integer NOT NULL,
    event_index   integer NOT NULL,
    coin_index    integer NOT NULL,
    msg_index     integer NOT NULL,
    kind          text    NOT NULL,  -- delegate | unbond | redelegate | complete_unbonding | complete_redelegation | withdraw_rewards | withdraw_commission | create_validator
    delegator     text    NOT NULL,
    validator     text    NOT NULL,
    src_validator text    NOT NULL,  -- redelegations
    denom         text    NOT NULL,
    amount        numeric NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index, coin_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX staking_events_delegator_idx ON staking_events (delegator, chain_id, height);

--bun:split

-- Every balance change, from coin_spent (negative) and coin_received
-- (positive) events: summing them per address gives its bank balance,
-- including movements without a transfer event (delegations, mints, burns).
CREATE TABLE balance_changes (
    chain_id    text    NOT NULL,
    height      bigint  NOT NULL,
    tx_index    integer NOT NULL,
    event_index integer NOT NULL,
    coin_index  integer NOT NULL,
    address     text    NOT NULL,
    denom       text    NOT NULL,
    delta       numeric NOT NULL,
    PRIMARY KEY (chain_id, height, tx_index, event_index, coin_index)
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX balance_changes_address_idx ON balance_changes (address, denom, chain_id, height);
