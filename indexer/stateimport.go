package indexer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains"
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

// stagePages stages the parts of a state import (a denom's holders, a
// validator's delegations), each page by page: page reads the page of part
// at key and returns a statement inserting its rows into the staging
// table, the next key and the page's row count. Each page commits with its
// progress (state_import_progress), so memory holds one page and a crash
// resumes at the page after the last committed. prefix tells the parts of
// one kind apart ("" for denoms).
func stagePages(ctx context.Context, db *bun.DB, chainID string, height int64, prefix string, parts []string,
	page func(part string, key []byte) (insert func(context.Context, bun.Tx) error, next []byte, rows int, err error)) error {
	keys := make([]string, len(parts))
	for i, p := range parts {
		keys[i] = prefix + p
	}
	if len(keys) > 0 {
		if _, err := db.NewRaw(`INSERT INTO state_import_progress (chain_id, height, part)
			SELECT ?, ?, unnest(?::text[]) ON CONFLICT DO NOTHING`, chainID, height, pgdialect.Array(keys)).Exec(ctx); err != nil {
			return fmt.Errorf("record the parts to import: %w", err)
		}
	}
	var todo []struct {
		Part    string `bun:"part"`
		NextKey []byte `bun:"next_key"`
	}
	if len(keys) == 0 {
		return nil
	}
	// Only the parts asked for: the opening queries are staged one at a
	// time.
	if err := db.NewRaw("SELECT part, next_key FROM state_import_progress WHERE chain_id = ? AND height = ? AND NOT done AND part = ANY(?::text[]) ORDER BY part",
		chainID, height, pgdialect.Array(keys)).Scan(ctx, &todo); err != nil {
		return fmt.Errorf("import progress: %w", err)
	}
	for _, t := range todo {
		part, key := t.Part[len(prefix):], t.NextKey
		for {
			insert, next, n, err := page(part, key)
			if err != nil {
				return err
			}
			err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				if n > 0 {
					if err := insert(ctx, tx); err != nil {
						return err
					}
				}
				_, err := tx.NewRaw(`UPDATE state_import_progress SET next_key = ?, done = ?, rows = rows + ?
					WHERE chain_id = ? AND height = ? AND part = ?`, next, len(next) == 0, n, chainID, height, t.Part).Exec(ctx)
				return err
			})
			if err != nil {
				return fmt.Errorf("stage %s: %w", t.Part, err)
			}
			if len(next) == 0 {
				break
			}
			key = next
		}
	}
	return nil
}

// stagedRows counts the rows of a staging table for chainID at height.
func stagedRows(ctx context.Context, db *bun.DB, table, chainID string, height int64) (int64, error) {
	var n int64
	err := db.NewRaw("SELECT count(*) FROM ? WHERE chain_id = ? AND height = ?", bun.Ident(table), chainID, height).Scan(ctx, &n)
	return n, err
}

// stageBankState reads every holder of every denom with a supply at height
// into state_import_balances (stagePages). It returns the rows staged.
func stageBankState(ctx context.Context, db *bun.DB, src BankState, chainID string, height int64) (int64, error) {
	denoms, err := src.SupplyDenoms(ctx, height)
	if err != nil {
		return 0, fmt.Errorf("denoms with a supply at %d: %w", height, err)
	}
	err = stagePages(ctx, db, chainID, height, "", denoms, func(denom string, key []byte) (func(context.Context, bun.Tx) error, []byte, int, error) {
		page, next, err := src.Holders(ctx, height, denom, key)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("holders of %s at %d: %w", denom, height, err)
		}
		addrs, amounts := make([]string, len(page)), make([]string, len(page))
		for i, h := range page {
			addrs[i], amounts[i] = h.Address, h.Amount
		}
		return func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.NewRaw(`INSERT INTO state_import_balances (chain_id, height, denom, address, amount)
				SELECT ?, ?, ?, a, m::numeric FROM unnest(?::text[], ?::text[]) AS u(a, m) ON CONFLICT DO NOTHING`,
				chainID, height, denom, pgdialect.Array(addrs), pgdialect.Array(amounts)).Exec(ctx)
			return err
		}, next, len(page), nil
	})
	if err != nil {
		return 0, err
	}
	return stagedRows(ctx, db, "state_import_balances", chainID, height)
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
// state_import_delegations (stagePages). It returns the rows staged.
func stageStakingState(ctx context.Context, db *bun.DB, src StakingState, chainID string, height int64) (int64, error) {
	vals, err := src.Validators(ctx, height)
	if err != nil {
		return 0, fmt.Errorf("validators at %d: %w", height, err)
	}
	err = stagePages(ctx, db, chainID, height, stakingPart, vals, func(val string, key []byte) (func(context.Context, bun.Tx) error, []byte, int, error) {
		page, next, err := src.Delegations(ctx, height, val, key)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("delegations to %s at %d: %w", val, height, err)
		}
		dels, denoms, amounts := make([]string, len(page)), make([]string, len(page)), make([]string, len(page))
		for i, d := range page {
			dels[i], denoms[i], amounts[i] = d.Delegator, d.Denom, d.Amount
		}
		return func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.NewRaw(`INSERT INTO state_import_delegations (chain_id, height, validator, delegator, denom, amount)
				SELECT ?, ?, ?, d, n, m::numeric FROM unnest(?::text[], ?::text[], ?::text[]) AS u(d, n, m) ON CONFLICT DO NOTHING`,
				chainID, height, val, pgdialect.Array(dels), pgdialect.Array(denoms), pgdialect.Array(amounts)).Exec(ctx)
			return err
		}, next, len(page), nil
	})
	if err != nil {
		return 0, err
	}
	return stagedRows(ctx, db, "state_import_delegations", chainID, height)
}

// OpeningState reads pages of a chain's own state at a past height, for
// an adapter's opening queries (chains.OpeningStateAdapter).
type OpeningState interface {
	// OpeningPage returns the items of the page of q at height starting
	// at key (nil: the first), and the next page's key (nil: the last);
	// req is the read of an Each query (zero otherwise). A query that is
	// not paginated (a whole gRPC query, a store read) is one page.
	OpeningPage(ctx context.Context, height int64, q chains.OpeningQuery, req chains.OpeningRequest, key []byte) (items [][]byte, next []byte, err error)
}

// openingPart prefixes the progress key of an opening query's pages; an
// Each query's reads follow its name after eachMark.
const (
	openingPart = "opening/"
	eachMark    = "#"
)

// stageOpeningQuery reads the pages of one of the adapter's opening
// queries at height into its opening tables (stagePages): they are the
// import's staging, valid once state_imports records the import. It
// returns the rows staged. An Each query reads every request of the rows
// its earlier query staged, then records itself done.
func stageOpeningQuery(ctx context.Context, db *bun.DB, src OpeningState, a chains.OpeningStateAdapter, q chains.OpeningQuery, chainID string, height int64) (int64, error) {
	tables := a.OpeningTables()
	name := q.Name()
	stage := func(req func(part string) chains.OpeningRequest) func(string, []byte) (func(context.Context, bun.Tx) error, []byte, int, error) {
		return func(part string, key []byte) (func(context.Context, bun.Tx) error, []byte, int, error) {
			r := req(part)
			items, next, err := src.OpeningPage(ctx, height, q, r, key)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("%s at %d: %w", part, height, err)
			}
			rows := chains.NewRows()
			if err := a.OpeningRows(chainID, height, name, r.Key, items, rows); err != nil {
				return nil, nil, 0, fmt.Errorf("%s at %d: %w", part, height, err)
			}
			return func(ctx context.Context, tx bun.Tx) error {
				for _, t := range tables {
					if err := insertRows(ctx, tx, t, rows.Of(t.Name)); err != nil {
						return err
					}
				}
				return nil
			}, next, rows.Len(), nil
		}
	}
	if q.Each != nil {
		reqs, err := eachRequests(ctx, db, q, chainID, height)
		if err != nil {
			return 0, err
		}
		// A part per read: a crash resumes after the last one staged.
		parts := make([]string, len(reqs))
		byPart := make(map[string]chains.OpeningRequest, len(reqs))
		for i, r := range reqs {
			parts[i] = name + eachMark + r.Key
			byPart[parts[i]] = r
		}
		if err := stagePages(ctx, db, chainID, height, openingPart, parts, stage(func(part string) chains.OpeningRequest { return byPart[part] })); err != nil {
			return 0, err
		}
		// Then the query itself, done once every read is.
		done := func(string, []byte) (func(context.Context, bun.Tx) error, []byte, int, error) {
			return nil, nil, 0, nil
		}
		if err := stagePages(ctx, db, chainID, height, openingPart, []string{name}, done); err != nil {
			return 0, err
		}
	} else if err := stagePages(ctx, db, chainID, height, openingPart, []string{name},
		stage(func(string) chains.OpeningRequest { return chains.OpeningRequest{} })); err != nil {
		return 0, err
	}
	var n int64
	err := db.NewRaw("SELECT coalesce(sum(rows), 0) FROM state_import_progress WHERE chain_id = ? AND height = ? AND (part = ? OR starts_with(part, ?))",
		chainID, height, openingPart+name, openingPart+name+eachMark).Scan(ctx, &n)
	return n, err
}

// eachRequests are the reads of an Each query: its requests for each row
// its earlier query staged at height, in the order of the row's columns.
func eachRequests(ctx context.Context, db *bun.DB, q chains.OpeningQuery, chainID string, height int64) ([]chains.OpeningRequest, error) {
	e := q.Each
	cols := make([]string, len(e.Columns))
	for i, c := range e.Columns {
		if !isIdent(c) {
			return nil, fmt.Errorf("%s: column %q", q.Name(), c)
		}
		cols[i] = "coalesce(" + c + "::text, '')"
	}
	if !isIdent(e.Table) {
		return nil, fmt.Errorf("%s: table %q", q.Name(), e.Table)
	}
	// Each row's columns as one text array.
	rows, err := db.QueryContext(ctx, "SELECT ARRAY["+strings.Join(cols, ", ")+"] FROM "+e.Table+
		" WHERE chain_id = ? AND height = ? ORDER BY "+strings.Join(cols, ", "), chainID, height)
	if err != nil {
		return nil, fmt.Errorf("%s: the rows of %s: %w", q.Name(), e.Table, err)
	}
	defer rows.Close()
	var out []chains.OpeningRequest
	seen := map[string]bool{}
	for rows.Next() {
		var row []string
		if err := rows.Scan(pgdialect.Array(&row)); err != nil {
			return nil, fmt.Errorf("%s: the rows of %s: %w", q.Name(), e.Table, err)
		}
		reqs, err := e.Requests(row)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.Name(), err)
		}
		for _, r := range reqs {
			if seen[r.Key] {
				return nil, fmt.Errorf("%s: two requests named %q", q.Name(), r.Key)
			}
			seen[r.Key] = true
			out = append(out, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: the rows of %s: %w", q.Name(), e.Table, err)
	}
	return out, nil
}

// isIdent reports whether s is a lower-case SQL identifier, or an array
// element of one ("denoms[1]"): the tables and columns adapters name,
// safe to write into a statement.
func isIdent(s string) bool {
	name, index, isElem := strings.Cut(s, "[")
	if isElem {
		n, ok := strings.CutSuffix(index, "]")
		if _, err := strconv.Atoi(n); !ok || err != nil {
			return false
		}
	}
	for i, r := range name {
		if !(r == '_' || 'a' <= r && r <= 'z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return name != ""
}

// openingTablesOf are the tables of a's opening tables that q writes.
func openingTablesOf(a chains.OpeningStateAdapter, q chains.OpeningQuery) []chains.Table {
	all := a.OpeningTables()
	if len(q.Tables) == 0 {
		return all
	}
	var out []chains.Table
	for _, t := range all {
		if slices.Contains(q.Tables, t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// insertRows inserts rows into t, a page at a time; a row already there
// (a page written again after a crash) is left as it is.
func insertRows(ctx context.Context, tx bun.Tx, t chains.Table, rows [][]any) error {
	const chunk = 1000
	for start := 0; start < len(rows); start += chunk {
		part := rows[start:min(start+chunk, len(rows))]
		q := "INSERT INTO ? (" + strings.Join(t.Columns, ", ") + ") VALUES "
		args := []any{bun.Ident(t.Name)}
		tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(t.Columns)), ", ") + ")"
		for i, r := range part {
			if len(r) != len(t.Columns) {
				return fmt.Errorf("%s: a row of %d values for %d columns", t.Name, len(r), len(t.Columns))
			}
			if i > 0 {
				q += ", "
			}
			q += tuple
			for _, v := range r {
				// A text[] or numeric[] value comes as []string, as the
				// domain rows' COPY takes it.
				if xs, ok := v.([]string); ok {
					v = pgdialect.Array(xs)
				}
				args = append(args, v)
			}
		}
		if _, err := tx.NewRaw(q+" ON CONFLICT DO NOTHING", args...).Exec(ctx); err != nil {
			return fmt.Errorf("stage %s: %w", t.Name, err)
		}
	}
	return nil
}

// writeStateImport moves the staged state at height into balance_changes
// (chains.GenesisHeight, tx_index cosmos.StateImportTx) when the bank
// state was staged (bank), and the staged delegations into staking_events;
// records what was imported (genesis_imports for the balances,
// state_imports per part) and clears the staging, in the first batch's
// transaction. The opening tables' rows stay: state_imports makes them
// valid.
func writeStateImport(ctx context.Context, conn bun.IConn, chainID string, height int64, firstTime time.Time, bank bool) (int64, error) {
	var n int64
	if bank {
		var err error
		if n, err = writeOpeningBalances(ctx, conn, chainID, height, firstTime); err != nil {
			return 0, err
		}
	}
	if err := writeOpeningDelegations(ctx, conn, chainID, height); err != nil {
		return 0, err
	}
	// Bank parts are denoms (no prefix).
	if _, err := conn.ExecContext(ctx, `INSERT INTO state_imports (chain_id, part, height, rows)
		SELECT chain_id, CASE WHEN starts_with(part, ?) THEN 'staking' WHEN starts_with(part, ?) THEN split_part(substr(part, ?), ?, 1) ELSE 'bank' END,
			height, sum(rows)
		FROM state_import_progress WHERE chain_id = ? AND height = ? GROUP BY 1, 2, 3
		ON CONFLICT (chain_id, part) DO UPDATE SET height = EXCLUDED.height, rows = EXCLUDED.rows, imported_at = now()`,
		stakingPart, openingPart, len(openingPart)+1, eachMark, chainID, height); err != nil {
		return 0, fmt.Errorf("record the state import: %w", err)
	}
	if err := clearStaged(ctx, conn, chainID, nil); err != nil {
		return 0, err
	}
	return n, nil
}

// writeOpeningBalances moves the staged balances into balance_changes and
// records them in genesis_imports.
func writeOpeningBalances(ctx context.Context, conn bun.IConn, chainID string, height int64, firstTime time.Time) (int64, error) {
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
	// The opening balances hold from the first indexed block on: their
	// height is its height, their time its time.
	if _, err := conn.ExecContext(ctx, `INSERT INTO genesis_imports (chain_id, initial_height, genesis_time, balance_rows, imported_at, state_height)
		VALUES (?, ?, ?, ?, now(), ?)
		ON CONFLICT (chain_id) DO UPDATE SET initial_height = EXCLUDED.initial_height, genesis_time = EXCLUDED.genesis_time,
		balance_rows = EXCLUDED.balance_rows, imported_at = now(), state_height = EXCLUDED.state_height`,
		chainID, height+1, firstTime, n, height); err != nil {
		return 0, fmt.Errorf("record the balances import: %w", err)
	}
	return n, nil
}

// writeOpeningDelegations moves the staged delegations into
// staking_events as delegate rows: a validator's tokens and a delegator's
// stake are then their sum over the indexed changes, as from a genesis.
func writeOpeningDelegations(ctx context.Context, conn bun.IConn, chainID string, height int64) error {
	if _, err := conn.ExecContext(ctx, "DELETE FROM staking_events WHERE chain_id = ? AND height = 0 AND tx_index = ?", chainID, cosmos.StateImportTx); err != nil {
		return fmt.Errorf("clear the opening delegations: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO staking_events (chain_id, height, tx_index, event_index, coin_index, msg_index, kind, delegator, validator, src_validator, denom, amount)
		SELECT chain_id, 0, ?, (row_number() OVER (ORDER BY validator, delegator))::int - 1, 0, -1, 'delegate', delegator, validator, '', denom, amount
		FROM state_import_delegations WHERE chain_id = ? AND height = ? AND amount > 0`, cosmos.StateImportTx, chainID, height); err != nil {
		return fmt.Errorf("write the opening delegations: %w", err)
	}
	return nil
}

// The staged parts clearStaged can drop, besides an opening query (by its
// name).
const (
	stagedBank    = "bank"
	stagedStaking = "staking"
)

// clearStaged deletes chainID's staged state of the parts named (nil:
// the staging tables and all progress; the opening tables' rows are kept,
// an import's by then). Dropping an opening query deletes the rows staged
// into its opening tables too: no import will make them valid.
func clearStaged(ctx context.Context, db bun.IConn, chainID string, parts []string, opening ...chains.Table) error {
	exec := func(q string, args ...any) error {
		_, err := db.ExecContext(ctx, q, args...)
		return err
	}
	if parts == nil {
		for _, t := range []string{"state_import_balances", "state_import_delegations", "state_import_progress"} {
			if err := exec("DELETE FROM "+t+" WHERE chain_id = ?", chainID); err != nil {
				return fmt.Errorf("clear %s: %w", t, err)
			}
		}
		return nil
	}
	for _, p := range parts {
		var err error
		switch p {
		case stagedBank:
			if err = exec("DELETE FROM state_import_balances WHERE chain_id = ?", chainID); err == nil {
				err = exec("DELETE FROM state_import_progress WHERE chain_id = ? AND NOT starts_with(part, ?) AND NOT starts_with(part, ?)",
					chainID, stakingPart, openingPart)
			}
		case stagedStaking:
			if err = exec("DELETE FROM state_import_delegations WHERE chain_id = ?", chainID); err == nil {
				err = exec("DELETE FROM state_import_progress WHERE chain_id = ? AND starts_with(part, ?)", chainID, stakingPart)
			}
		default:
			// An opening query's name: its staged rows, in the tables it
			// writes, and its progress.
			for _, t := range opening {
				if err = exec("DELETE FROM ? WHERE chain_id = ? AND NOT EXISTS (SELECT 1 FROM state_imports i WHERE i.chain_id = ? AND i.height = ?.height)",
					bun.Ident(t.Name), chainID, chainID, bun.Ident(t.Name)); err != nil {
					break
				}
			}
			if err == nil {
				err = exec("DELETE FROM state_import_progress WHERE chain_id = ? AND (part = ? OR starts_with(part, ?))", chainID, openingPart+p, openingPart+p+eachMark)
			}
		}
		if err != nil {
			return fmt.Errorf("clear the staged %s state: %w", p, err)
		}
	}
	return nil
}
