DROP INDEX IF EXISTS messages_kept_raw_idx;
