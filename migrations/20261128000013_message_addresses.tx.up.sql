-- The accounts each message involves (its tx's signers, the addresses in
-- its body and in its events) as address bytes, so "every message touching
-- an account" is an index scan whatever prefix the account is written
-- with. Partitioned by height like messages; rewritten with its height.
CREATE TABLE message_addresses (
    chain_id  text     NOT NULL,
    height    bigint   NOT NULL,
    tx_index  integer  NOT NULL,
    msg_index integer  NOT NULL,
    address   bytea    NOT NULL   -- 20 or 32 bytes
) PARTITION BY RANGE (height);

--bun:split

CREATE INDEX message_addresses_address_idx ON message_addresses (address, chain_id, height DESC);

--bun:split

-- Rows arrive in height order: a block range index finds a height's rows
-- (rewrites, resets) at a fraction of a btree's size.
CREATE INDEX message_addresses_height_brin ON message_addresses USING brin (chain_id, height);
