package dex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/osmosis"
)

// A chain indexed from a height H after its initial one starts from the
// pools and concentrated-liquidity positions the indexer imported at H−1
// (chains/osmosis: osmosis_opening_pools, osmosis_opening_cl_positions),
// each valid once state_imports records its import. The jobs take them as
// pools created and positions opened before H, holding from the first
// indexed block (its time): the pool catalog they read is the view
// osmosis_known_pools, which adds the opening pools to osmosis_pools.

// opening is what a late start imported at the height before its first
// indexed block.
type opening struct {
	Height int64     // the state's height (H−1)
	Time   time.Time // the time of the first indexed block
	// Positions, Bank: whether the concentrated-liquidity positions and
	// the bank state were imported too (each part is imported, or not, on
	// its own). Ticks: whether the pools' ticks and their records were
	// (what replays the pools when the positions were not).
	Positions, Bank, Ticks bool
}

// loadOpening returns the opening of chain, or nil when no pools were
// imported (a chain indexed from its genesis, or one whose node did not
// serve the pools at H−1) or its first block is not indexed yet.
func loadOpening(ctx context.Context, db bun.IDB, chain string) (*opening, error) {
	var o struct {
		Height    int64     `bun:"height"`
		Time      time.Time `bun:"time"`
		Positions bool      `bun:"positions"`
		Bank      bool      `bun:"bank"`
		Ticks     bool      `bun:"ticks"`
	}
	err := db.NewRaw(`SELECT i.height, b.time,
			EXISTS (SELECT 1 FROM state_imports p WHERE p.chain_id = i.chain_id AND p.part = ?1 AND p.height = i.height) AS positions,
			EXISTS (SELECT 1 FROM state_imports p WHERE p.chain_id = i.chain_id AND p.part = 'bank' AND p.height = i.height) AS bank,
			(SELECT count(*) = 2 FROM state_imports p WHERE p.chain_id = i.chain_id AND p.part IN (?3, ?4) AND p.height = i.height) AS ticks
		FROM state_imports i
		CROSS JOIN LATERAL (SELECT time FROM blocks WHERE chain_id = i.chain_id AND height > i.height ORDER BY height LIMIT 1) b
		WHERE i.chain_id = ?0 AND i.part = ?2`, chain, osmosis.OpeningPositions, osmosis.OpeningPools,
		osmosis.OpeningTicks, osmosis.OpeningTickInfo).Scan(ctx, &o)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening state: %w", err)
	}
	return &opening{Height: o.Height, Time: o.Time, Positions: o.Positions, Bank: o.Bank, Ticks: o.Ticks}, nil
}

// openingPositions are the concentrated-liquidity positions of chain ?0 a
// late start imported (once state_imports records their import), with the
// time of the first indexed block: position_id, pool_id, address (the
// owner), lower_tick, upper_tick, liquidity, height (the state's), time.
const openingPositions = `SELECT o.position_id, o.pool_id, o.address, o.lower_tick, o.upper_tick, o.liquidity, o.height, b.time
	FROM state_imports i
	CROSS JOIN LATERAL (SELECT time FROM blocks WHERE chain_id = i.chain_id AND height > i.height ORDER BY height LIMIT 1) b
	JOIN osmosis_opening_cl_positions o ON o.chain_id = i.chain_id AND o.height = i.height
	WHERE i.chain_id = ?0 AND i.part = '` + osmosis.OpeningPositions + `'`
