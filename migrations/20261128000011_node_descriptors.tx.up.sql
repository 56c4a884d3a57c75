-- Protobuf file descriptors a chain's node serves through its reflection
-- service (cosmos.reflection.v1), one row per application version: the
-- indexer decodes messages with them before the shipped sets, and
-- `chainlens index --redecode` later needs no node.
CREATE TABLE node_descriptors (
    chain_id     text        NOT NULL,
    app_version  text        NOT NULL,  -- abci_info version when fetched
    first_height bigint      NOT NULL,  -- the node's last block height when first fetched
    files        integer     NOT NULL,
    set_gz       bytea       NOT NULL,  -- gzipped google.protobuf.FileDescriptorSet
    fetched_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, app_version)
);
