-- The raw tables (blocks, txs, messages, events, message_addresses,
-- commit_signatures) were range-partitioned by height across all chains:
-- one partition held the same heights of every chain, so no chain's old
-- heights could be dropped alone. They become list-partitioned by chain,
-- each chain's part range-partitioned by height (a million heights each,
-- store.PartitionSpan), so that retention drops a chain's old partitions
-- (never a DELETE of a large range). Partition names: <table>_<first 10 hex
-- of md5(chain_id)>_p<height / span>, created on demand by
-- chainlens_chain_partitions (the indexer calls it too). The rows are
-- copied once; a large database takes as long as a copy of these tables.

CREATE FUNCTION chainlens_chain_partitions(tbl text, chain text, from_h bigint, to_h bigint, span bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    parent text := tbl || '_' || substr(md5(chain), 1, 10);
    p bigint;
BEGIN
    IF to_regclass(parent) IS NULL THEN
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES IN (%L) PARTITION BY RANGE (height)', parent, tbl, chain);
        EXECUTE format('COMMENT ON TABLE %I IS %L', parent, tbl || ' of chain ' || chain);
    END IF;
    FOR p IN (from_h / span) .. (to_h / span) LOOP
        IF to_regclass(parent || '_p' || p) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)', parent || '_p' || p, parent, p * span, (p + 1) * span);
        END IF;
    END LOOP;
END
$$;

--bun:split

DROP VIEW block_headers;

--bun:split

DO $$
DECLARE
    t text;
    c text;
    lo bigint;
    hi bigint;
BEGIN
    FOREACH t IN ARRAY ARRAY['blocks', 'txs', 'messages', 'events', 'message_addresses', 'commit_signatures'] LOOP
        EXECUTE format('ALTER TABLE %I RENAME TO %I', t, t || '_by_height');
        EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS) PARTITION BY LIST (chain_id)', t, t || '_by_height');
        -- Each chain present (a loose index scan of the leading chain_id).
        FOR c IN EXECUTE format('WITH RECURSIVE c AS (SELECT min(chain_id) AS id FROM %1$I
                UNION ALL SELECT (SELECT min(chain_id) FROM %1$I WHERE chain_id > c.id) FROM c WHERE c.id IS NOT NULL)
            SELECT id FROM c WHERE id IS NOT NULL', t || '_by_height') LOOP
            EXECUTE format('SELECT min(height), max(height) FROM %I WHERE chain_id = $1', t || '_by_height') INTO lo, hi USING c;
            PERFORM chainlens_chain_partitions(t, c, lo, hi, 1000000);
        END LOOP;
        EXECUTE format('INSERT INTO %I SELECT * FROM %I', t, t || '_by_height');
        EXECUTE format('DROP TABLE %I', t || '_by_height');
    END LOOP;
END
$$;

--bun:split

ALTER TABLE blocks ADD PRIMARY KEY (chain_id, height);
ALTER TABLE txs ADD PRIMARY KEY (chain_id, height, tx_index);
ALTER TABLE messages ADD PRIMARY KEY (chain_id, height, tx_index, msg_index);
ALTER TABLE events ADD PRIMARY KEY (chain_id, height, tx_index, event_index);
ALTER TABLE commit_signatures ADD PRIMARY KEY (chain_id, height, validator_index);

--bun:split

CREATE INDEX txs_hash_idx ON txs (hash);
CREATE INDEX messages_type_idx ON messages (chain_id, type_url, height);
CREATE INDEX events_type_idx ON events (chain_id, type, height)
    WHERE type <> ALL (ARRAY['message', 'tx', 'coin_spent', 'coin_received', 'transfer']);
CREATE INDEX messages_kept_raw_idx ON messages (chain_id, height, tx_index, msg_index) INCLUDE (type_url) WHERE raw IS NOT NULL;
CREATE INDEX message_addresses_address_idx ON message_addresses (address, chain_id, height DESC);
CREATE INDEX message_addresses_height_brin ON message_addresses USING brin (chain_id, height);
CREATE INDEX commit_signatures_validator_idx ON commit_signatures (chain_id, validator, height);

--bun:split

CREATE TRIGGER blocks_changes AFTER INSERT ON blocks REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION chainlens_notify_chains();

--bun:split

CREATE VIEW block_headers AS
	SELECT chain_id, height, hash, time FROM blocks
	UNION ALL
	SELECT chain_id, height, hash, time FROM evm_blocks;

--bun:split

-- What retention dropped of each chain's raw tables: every height below
-- pruned_below (jobs that would need them refuse to run).
CREATE TABLE raw_retention (
    chain_id     text        PRIMARY KEY,
    pruned_below bigint      NOT NULL,
    pruned_at    timestamptz NOT NULL DEFAULT now()
);
