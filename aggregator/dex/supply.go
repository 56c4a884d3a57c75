package dex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	"github.com/uptrace/bun"
)

// Supply is the dex_supply job: osmosis_supply, the staking token's supply
// at the indexed tip. The total is the latest supply snapshot at or below
// the tip (state_snapshots, indexer/snapshot) plus what changed the supply
// after it, as Osmosis counts it (SupplyAt, supplyChanges). Burnt counts the burns
// that destroy supply: not those of the superfluid, protorev and mint
// module accounts, which burn what they minted themselves; burnt
// adds the burn rows since the previous row (all of them for the first row); the community pool is the
// latest community_pool snapshot. Without a supply snapshot there is no row.
//
// Its watermark is the tip of its last row; a rerun from the same watermark
// writes the same row (burnt continues from the row at the watermark).
type Supply struct{ Market report.Market }

// Name is the job name.
func (Supply) Name() string { return report.JobSupply }

// Version is the version of the job's rows (see aggregator.Job).
func (Supply) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Supply) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_supply"}, ChainID: j.Market.ChainID}
}

// Run writes the supply at the indexed tip.
func (j Supply) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	chain, denom := j.Market.ChainID, j.Market.Hub
	tip, err := store.IndexedTip(ctx, tx, chain)
	if err != nil || tip <= wm {
		return wm, 0, err
	}
	supply, ok, err := SupplyAt(ctx, tx, j.Market, tip)
	if err != nil || !ok {
		return tip, 0, err
	}
	var snap int64
	if err := tx.NewRaw(`SELECT height FROM state_snapshots WHERE chain_id = ? AND kind = 'taken' AND key = 'supply' AND height <= ?
		ORDER BY height DESC LIMIT 1`, chain, tip).Scan(ctx, &snap); err != nil {
		return 0, 0, fmt.Errorf("supply snapshot: %w", err)
	}
	total, ok := supply[denom]
	if !ok {
		total = math.ZeroInt()
	}
	// burnt continues from the last row at or below the watermark.
	prev := struct {
		Height int64  `bun:"height"`
		Burnt  string `bun:"burnt"`
	}{Burnt: "0"}
	err = tx.NewRaw(`SELECT height, burnt::text AS burnt FROM osmosis_supply WHERE chain_id = ? AND height <= ?
		ORDER BY height DESC LIMIT 1`, chain, wm).Scan(ctx, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("previous supply: %w", err)
	}
	superfluid, err1 := moduleAddress(j.Market.Prefix, "superfluid")
	protorev, err2 := moduleAddress(j.Market.Prefix, "protorev")
	mint, err3 := moduleAddress(j.Market.Prefix, "mint")
	if err := errors.Join(err1, err2, err3); err != nil {
		return 0, 0, fmt.Errorf("module addresses: %w", err)
	}
	var row struct {
		Time      time.Time `bun:"time"`
		Burnt     string    `bun:"burnt"`
		Community string    `bun:"community"`
	}
	if err := tx.NewRaw(`SELECT
			(SELECT time FROM blocks WHERE chain_id = ?0 AND height = ?2) AS time,
			(?5::numeric + coalesce((SELECT sum(amount) FROM transfers
					WHERE chain_id = ?0 AND height > ?4 AND height <= ?2 AND kind = 'burn' AND denom = ?1
					AND sender NOT IN (?6, ?7, ?8)), 0))::text AS burnt,
			coalesce((SELECT trunc(s.amount) FROM state_snapshots s WHERE s.chain_id = ?0 AND s.kind = 'community_pool' AND s.key = '' AND s.denom = ?1
				AND s.height = (SELECT max(height) FROM state_snapshots WHERE chain_id = ?0 AND kind = 'taken' AND key = 'community_pool' AND height <= ?2)), 0)::text AS community`,
		chain, denom, tip, snap, prev.Height, prev.Burnt, superfluid, protorev, mint).Scan(ctx, &row); err != nil {
		return 0, 0, fmt.Errorf("supply at %d: %w", tip, err)
	}
	if _, err := tx.NewRaw(`INSERT INTO osmosis_supply (chain_id, height, time, denom, total, burnt, community_pool, snapshot_height)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (chain_id, height) DO UPDATE SET time = EXCLUDED.time, denom = EXCLUDED.denom, total = EXCLUDED.total,
			burnt = EXCLUDED.burnt, community_pool = EXCLUDED.community_pool, snapshot_height = EXCLUDED.snapshot_height`,
		chain, tip, row.Time, denom, total.String(), row.Burnt, row.Community, snap).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("supply row: %w", err)
	}
	return tip, 1, nil
}

// moduleAddress is the bech32 account address of a module account.
func moduleAddress(prefix, module string) (string, error) {
	return bech32.ConvertAndEncode(prefix, authtypes.NewModuleAddress(module))
}
