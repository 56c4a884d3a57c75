DROP INDEX IF EXISTS perp_liquidations_unsized_idx;
