-- Data-change announcements: every commit that changes what the API serves
-- sends NOTIFY chainlens_changes with the chain id it touched, or '*' when a
-- report table may have changed. The API keeps an answer in its response
-- cache until the data it was computed from is announced changed (see
-- store.Changes). Triggers, not the writers, send them, so every writer is
-- covered (indexer commits, dead-letter retries, reindexes, resets,
-- snapshots, aggregator runs, and SQL typed by an operator). Notifications
-- are delivered at commit, and identical ones of a transaction are sent once.

CREATE FUNCTION chainlens_notify_chains() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    id text;
BEGIN
    FOR id IN SELECT DISTINCT chain_id FROM changed LOOP
        PERFORM pg_notify('chainlens_changes', id);
    END LOOP;
    RETURN NULL;
END
$$;

--bun:split

CREATE FUNCTION chainlens_notify_row_chain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('chainlens_changes', coalesce(NEW.chain_id, OLD.chain_id));
    RETURN NULL;
END
$$;

--bun:split

CREATE FUNCTION chainlens_notify_reports() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('chainlens_changes', '*');
    RETURN NULL;
END
$$;

--bun:split

-- Heights written (forward, retried from dead letters, reindexed).
CREATE TRIGGER blocks_changes AFTER INSERT ON blocks
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION chainlens_notify_chains();

--bun:split

CREATE TRIGGER evm_blocks_changes AFTER INSERT ON evm_blocks
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION chainlens_notify_chains();

--bun:split

-- Checkpoints moved, chains reset or removed.
CREATE TRIGGER sync_state_changes AFTER INSERT OR UPDATE OR DELETE ON sync_state
    FOR EACH ROW EXECUTE FUNCTION chainlens_notify_row_chain();

--bun:split

CREATE TRIGGER state_snapshots_changes AFTER INSERT ON state_snapshots
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION chainlens_notify_chains();

--bun:split

-- An aggregator run that moved its watermark or wrote report rows may have
-- changed any report table (a run that did neither changed nothing: the
-- Job contract reports every row written). The engagement jobs are left
-- out: their tables (audience members, conversions, campaign reports) are
-- read only by uncached endpoints, and two of them advance their watermark
-- to the clock on every run.
CREATE TRIGGER aggregator_jobs_changes AFTER UPDATE ON aggregator_jobs
    FOR EACH ROW WHEN (NEW.last_error IS NULL AND NEW.name NOT LIKE 'engagement\_%'
        AND (NEW.watermark IS DISTINCT FROM OLD.watermark OR NEW.last_rows > 0))
    EXECUTE FUNCTION chainlens_notify_reports();
