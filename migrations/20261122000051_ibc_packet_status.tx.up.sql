-- Open and closed IBC packets per sending chain (ibc_packets.<chain id>
-- jobs, aggregator/ibc): a packet is open from its send_packet on the
-- sending chain until an acknowledge_packet or timeout_packet there, or its
-- recv_packet on the receiving chain, is indexed. Either side may be
-- indexed first: sent_* stay NULL until the send is seen.
CREATE TABLE ibc_packet_status (
    chain_id      text        NOT NULL,  -- the sending chain
    src_port      text        NOT NULL,
    src_channel   text        NOT NULL,
    sequence      bigint      NOT NULL,
    sent_height   bigint,
    sent_at       timestamptz,
    closed_chain  text,                  -- chain id where the closing event was indexed
    closed_height bigint,
    closed_by     text,                  -- ack | timeout | recv; NULL while open
    PRIMARY KEY (chain_id, src_port, src_channel, sequence)
);

--bun:split

CREATE INDEX ibc_packet_status_open_idx ON ibc_packet_status (chain_id, src_port, src_channel, sent_at) WHERE closed_by IS NULL;
