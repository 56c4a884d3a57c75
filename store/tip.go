package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// IndexedTip is the last height the indexer committed for chainID (its
// checkpoint's next height minus one), 0 before the first commit.
func IndexedTip(ctx context.Context, db bun.IDB, chainID string) (int64, error) {
	var next int64
	err := db.NewRaw("SELECT next_height FROM sync_state WHERE chain_id = ?", chainID).Scan(ctx, &next)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sync state of %s: %w", chainID, err)
	}
	return next - 1, nil
}
