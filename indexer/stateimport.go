package indexer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains/cosmos"
)

// Holding is one account's balance of a denom.
type Holding struct {
	Address string
	Amount  string // an integer
}

// BankState reads a chain's bank state at a past height from its node
// (gRPC over abci_query): the denoms with a supply, and each denom's
// holders page by page.
type BankState interface {
	SupplyDenoms(ctx context.Context, height int64) ([]string, error)
	// Holders returns the page of denom's holders at height starting at
	// key (nil: the first), and the next page's key (nil: the last page).
	Holders(ctx context.Context, height int64, denom string, key []byte) ([]Holding, []byte, error)
}

// ErrStateUnavailable wraps a node's refusal to answer a query at a height
// (pruned state, or a query it does not serve): the import says what is
// missing and indexing goes on without it.
var ErrStateUnavailable = errors.New("the node serves no such state")

// stageBankState reads every holder of every denom with a supply at height
// into state_import_balances, a page per transaction with its progress
// (state_import_progress), so memory holds one page and a crash resumes at
// the page after the last committed. It returns the rows staged.
func stageBankState(ctx context.Context, db *bun.DB, src BankState, chainID string, height int64) (int64, error) {
	denoms, err := src.SupplyDenoms(ctx, height)
	if err != nil {
		return 0, fmt.Errorf("denoms with a supply at %d: %w", height, err)
	}
	if len(denoms) > 0 {
		if _, err := db.NewRaw(`INSERT INTO state_import_progress (chain_id, height, part)
			SELECT ?, ?, unnest(?::text[]) ON CONFLICT DO NOTHING`, chainID, height, pgdialect.Array(denoms)).Exec(ctx); err != nil {
			return 0, fmt.Errorf("record the denoms to import: %w", err)
		}
	}
	var todo []struct {
		Denom   string `bun:"denom"`
		NextKey []byte `bun:"next_key"`
	}
	if err := db.NewRaw("SELECT part AS denom, next_key FROM state_import_progress WHERE chain_id = ? AND height = ? AND NOT done AND part NOT LIKE 'staking/%' ORDER BY part",
		chainID, height).Scan(ctx, &todo); err != nil {
		return 0, fmt.Errorf("import progress: %w", err)
	}
	for _, d := range todo {
		key := d.NextKey
		for {
			page, next, err := src.Holders(ctx, height, d.Denom, key)
			if err != nil {
				return 0, fmt.Errorf("holders of %s at %d: %w", d.Denom, height, err)
			}
			err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				if len(page) > 0 {
					addrs, amounts := make([]string, len(page)), make([]string, len(page))
					for i, h := range page {
						addrs[i], amounts[i] = h.Address, h.Amount
					}
					if _, err := tx.NewRaw(`INSERT INTO state_import_balances (chain_id, height, denom, address, amount)
						SELECT ?, ?, ?, a, m::numeric FROM unnest(?::text[], ?::text[]) AS u(a, m) ON CONFLICT DO NOTHING`,
						chainID, height, d.Denom, pgdialect.Array(addrs), pgdialect.Array(amounts)).Exec(ctx); err != nil {
						return err
					}
				}
				_, err := tx.NewRaw(`UPDATE state_import_progress SET next_key = ?, done = ?, rows = rows + ?
					WHERE chain_id = ? AND height = ? AND part = ?`, next, len(next) == 0, len(page), chainID, height, d.Denom).Exec(ctx)
				return err
			})
			if err != nil {
				return 0, fmt.Errorf("stage holders of %s: %w", d.Denom, err)
			}
			if len(next) == 0 {
				break
			}
			key = next
		}
	}
	var n int64
	if err := db.NewRaw("SELECT count(*) FROM state_import_balances WHERE chain_id = ? AND height = ?", chainID, height).Scan(ctx, &n); err != nil {
		return 0, err
	}
	return n, nil
}

// Delegation is one delegator's delegation to a validator, in tokens.
type Delegation struct {
	Delegator string
	Denom     string
	Amount    string // an integer
}

// StakingState is a BankState that also reads the staking module's state
// at a past height: the validators, and each one's delegations page by
// page.
type StakingState interface {
	Validators(ctx context.Context, height int64) ([]string, error)
	Delegations(ctx context.Context, height int64, validator string, key []byte) ([]Delegation, []byte, error)
}

// stakingPart is the progress key of a validator's delegations.
const stakingPart = "staking/"

// stageStakingState reads every validator's delegations at height into
// state_import_delegations, a page per transaction, as stageBankState.
func stageStakingState(ctx context.Context, db *bun.DB, src StakingState, chainID string, height int64) (int64, error) {
	vals, err := src.Validators(ctx, height)
	if err != nil {
		return 0, fmt.Errorf("validators at %d: %w", height, err)
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = stakingPart + v
	}
	if len(parts) > 0 {
		if _, err := db.NewRaw(`INSERT INTO state_import_progress (chain_id, height, part)
			SELECT ?, ?, unnest(?::text[]) ON CONFLICT DO NOTHING`, chainID, height, pgdialect.Array(parts)).Exec(ctx); err != nil {
			return 0, fmt.Errorf("record the validators to import: %w", err)
		}
	}
	var todo []struct {
		Part    string `bun:"part"`
		NextKey []byte `bun:"next_key"`
	}
	if err := db.NewRaw("SELECT part, next_key FROM state_import_progress WHERE chain_id = ? AND height = ? AND NOT done AND part LIKE 'staking/%' ORDER BY part",
		chainID, height).Scan(ctx, &todo); err != nil {
		return 0, fmt.Errorf("import progress: %w", err)
	}
	for _, p := range todo {
		val, key := p.Part[len(stakingPart):], p.NextKey
		for {
			page, next, err := src.Delegations(ctx, height, val, key)
			if err != nil {
				return 0, fmt.Errorf("delegations to %s at %d: %w", val, height, err)
			}
			err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				if len(page) > 0 {
					dels, denoms, amounts := make([]string, len(page)), make([]string, len(page)), make([]string, len(page))
					for i, d := range page {
						dels[i], denoms[i], amounts[i] = d.Delegator, d.Denom, d.Amount
					}
					if _, err := tx.NewRaw(`INSERT INTO state_import_delegations (chain_id, height, validator, delegator, denom, amount)
						SELECT ?, ?, ?, d, n, m::numeric FROM unnest(?::text[], ?::text[], ?::text[]) AS u(d, n, m) ON CONFLICT DO NOTHING`,
						chainID, height, val, pgdialect.Array(dels), pgdialect.Array(denoms), pgdialect.Array(amounts)).Exec(ctx); err != nil {
						return err
					}
				}
				_, err := tx.NewRaw(`UPDATE state_import_progress SET next_key = ?, done = ?, rows = rows + ?
					WHERE chain_id = ? AND height = ? AND part = ?`, next, len(next) == 0, len(page), chainID, height, p.Part).Exec(ctx)
				return err
			})
			if err != nil {
				return 0, fmt.Errorf("stage delegations to %s: %w", val, err)
			}
			if len(next) == 0 {
				break
			}
			key = next
		}
	}
	var n int64
	if err := db.NewRaw("SELECT count(*) FROM state_import_delegations WHERE chain_id = ? AND height = ?", chainID, height).Scan(ctx, &n); err != nil {
		return 0, err
	}
	return n, nil
}

// writeStateImport moves the staged state at height into balance_changes
// (chains.GenesisHeight, tx_index cosmos.StateImportTx), records the import
// and clears the staging, in the first batch's transaction.
func writeStateImport(ctx context.Context, conn bun.IConn, chainID string, height int64, firstTime time.Time) (int64, error) {
	if _, err := conn.ExecContext(ctx, "DELETE FROM balance_changes WHERE chain_id = ? AND height = 0", chainID); err != nil {
		return 0, fmt.Errorf("clear the opening balances: %w", err)
	}
	res, err := conn.ExecContext(ctx, `INSERT INTO balance_changes (chain_id, height, tx_index, event_index, coin_index, address, denom, delta)
		SELECT chain_id, 0, ?, (row_number() OVER (ORDER BY denom, address))::int - 1, 0, address, denom, amount
		FROM state_import_balances WHERE chain_id = ? AND height = ? AND amount > 0`, cosmos.StateImportTx, chainID, height)
	if err != nil {
		return 0, fmt.Errorf("write the opening balances: %w", err)
	}
	n, _ := res.RowsAffected()
	// Delegations as delegate rows: a validator's tokens and a delegator's
	// stake are then their sum over the indexed changes, as from a genesis.
	if _, err := conn.ExecContext(ctx, "DELETE FROM staking_events WHERE chain_id = ? AND height = 0 AND tx_index = ?", chainID, cosmos.StateImportTx); err != nil {
		return 0, fmt.Errorf("clear the opening delegations: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO staking_events (chain_id, height, tx_index, event_index, coin_index, msg_index, kind, delegator, validator, src_validator, denom, amount)
		SELECT chain_id, 0, ?, (row_number() OVER (ORDER BY validator, delegator))::int - 1, 0, -1, 'delegate', delegator, validator, '', denom, amount
		FROM state_import_delegations WHERE chain_id = ? AND height = ? AND amount > 0`, cosmos.StateImportTx, chainID, height); err != nil {
		return 0, fmt.Errorf("write the opening delegations: %w", err)
	}
	// The opening balances hold from the first indexed block on: their
	// height is its height, their time its time.
	if _, err := conn.ExecContext(ctx, `INSERT INTO genesis_imports (chain_id, initial_height, genesis_time, balance_rows, imported_at, state_height)
		VALUES (?, ?, ?, ?, now(), ?)
		ON CONFLICT (chain_id) DO UPDATE SET initial_height = EXCLUDED.initial_height, genesis_time = EXCLUDED.genesis_time,
		balance_rows = EXCLUDED.balance_rows, imported_at = now(), state_height = EXCLUDED.state_height`,
		chainID, height+1, firstTime, n, height); err != nil {
		return 0, fmt.Errorf("record the state import: %w", err)
	}
	for _, t := range []string{"state_import_balances", "state_import_delegations", "state_import_progress"} {
		if _, err := conn.ExecContext(ctx, "DELETE FROM "+t+" WHERE chain_id = ?", chainID); err != nil {
			return 0, fmt.Errorf("clear %s: %w", t, err)
		}
	}
	return n, nil
}
