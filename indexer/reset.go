package indexer

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
)

// ResetChain deletes everything indexed for a chain (raw and domain rows of
// the given tables, opening tables included, dead letters, snapshots, state
// imports and the checkpoint) in one transaction, so indexing starts over.
func ResetChain(ctx context.Context, db *bun.DB, chainID string, domain []chains.Table) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		tables := []string{"sync_state", "dead_letters", "genesis_imports", "state_import_progress", "state_import_balances", "state_import_delegations", "state_imports", "raw_retention"}
		for _, t := range rawTables {
			tables = append(tables, t.Name)
		}
		for _, t := range domain {
			tables = append(tables, t.Name)
		}
		var optional []string // tables of other migrations that may hold the chain
		if err := tx.NewRaw(`SELECT relname FROM pg_class WHERE relname IN ('state_snapshots', 'evm_blocks', 'erc20_transfers', 'evm_bridge_transfers') AND relkind IN ('r', 'p')`).Scan(ctx, &optional); err != nil {
			return err
		}
		for _, t := range append(tables, optional...) {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE chain_id = ?", chainID); err != nil {
				return fmt.Errorf("reset %s: %s: %w", chainID, t, err)
			}
		}
		return nil
	})
}
