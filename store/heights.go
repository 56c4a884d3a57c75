package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// HeightBefore is the greatest indexed height of chainID whose block time
// is before t, 0 when no indexed block is: "height > HeightBefore(t)" is
// "block time >= t", because block times never decrease with height (BFT
// time; an EVM block's timestamp exceeds its parent's). Jobs bound their
// reads from a time this way, by height, since the raw and domain tables
// are ordered by height and block headers have no index by time: a scan
// for "time >= t" would read the chain from its first block, a cost that
// grows with history. Either family's blocks (block_headers).
//
// It bisects the height range, one primary-key probe per step (about 25 on
// a year of one-second blocks); gaps in the indexed heights (a late start,
// retention) are allowed.
func HeightBefore(ctx context.Context, db bun.IDB, chainID string, t time.Time) (int64, error) {
	// probe is the first indexed block at or after height h (ok false: none).
	probe := func(h int64, desc bool) (height int64, at time.Time, ok bool, err error) {
		q := "SELECT height, time FROM block_headers WHERE chain_id = ? AND height >= ? ORDER BY height LIMIT 1"
		if desc {
			q = "SELECT height, time FROM block_headers WHERE chain_id = ? AND height >= ? ORDER BY height DESC LIMIT 1"
		}
		err = db.QueryRowContext(ctx, q, chainID, h).Scan(&height, &at)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, time.Time{}, false, nil
		}
		if err != nil {
			return 0, time.Time{}, false, fmt.Errorf("block of %s at height %d: %w", chainID, h, err)
		}
		return height, at, true, nil
	}
	lo, loTime, ok, err := probe(0, false)
	if err != nil || !ok || !loTime.Before(t) {
		return 0, err
	}
	hi, hiTime, _, err := probe(0, true)
	if err != nil || hiTime.Before(t) {
		return hi, err
	}
	// The answer a holds lo <= a < hi: lo's block is before t, and every
	// block at or above hi is not.
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		h, at, ok, err := probe(mid, false)
		switch {
		case err != nil:
			return 0, err
		case ok && h < hi && at.Before(t):
			lo = h
		default: // no block in [mid, hi), or the first one is not before t
			hi = mid
		}
	}
	return lo, nil
}
