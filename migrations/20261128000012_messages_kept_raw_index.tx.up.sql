-- The messages kept as bytes (a type no descriptor set decodes yet, or a
-- body that lacks fields): few once every message is decoded from
-- descriptors. `chainlens index --redecode` walks them in height order and
-- `chainlens status` counts them by type, without reading the rest.
CREATE INDEX messages_kept_raw_idx ON messages (chain_id, height, tx_index, msg_index) INCLUDE (type_url) WHERE raw IS NOT NULL;
