DROP TRIGGER aggregator_jobs_changes ON aggregator_jobs;

--bun:split

DROP TRIGGER state_snapshots_changes ON state_snapshots;

--bun:split

DROP TRIGGER sync_state_changes ON sync_state;

--bun:split

DROP TRIGGER evm_blocks_changes ON evm_blocks;

--bun:split

DROP TRIGGER blocks_changes ON blocks;

--bun:split

DROP FUNCTION chainlens_notify_reports();

--bun:split

DROP FUNCTION chainlens_notify_row_chain();

--bun:split

DROP FUNCTION chainlens_notify_chains();
