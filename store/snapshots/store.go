package snapshots

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// insertChunk is the number of rows per INSERT statement (8 values each).
const insertChunk = 1000

// Store writes the rows of the snapshot of chainID at height, taken at
// block time t, in one transaction (a savepoint when db is a bun.Tx): it
// deletes whatever that (chain_id, height) held, then inserts rows, so
// storing the same snapshot again is a no-op.
func Store(ctx context.Context, db bun.IDB, chainID string, height int64, t time.Time, rows []Row) error {
	// Postgres rounds the nanoseconds of block times to microseconds, as in
	// the blocks table (written by COPY in the same text form).
	ts := t.UTC().Format("2006-01-02 15:04:05.999999999Z07:00")
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM state_snapshots WHERE chain_id = ? AND height = ?", chainID, height); err != nil {
			return fmt.Errorf("clear: %w", err)
		}
		for start := 0; start < len(rows); start += insertChunk {
			chunk := rows[start:min(start+insertChunk, len(rows))]
			var q strings.Builder
			args := make([]any, 0, 8*len(chunk))
			q.WriteString("INSERT INTO state_snapshots (chain_id, height, time, kind, key, denom, amount, data) VALUES ")
			for i, r := range chunk {
				if r.Kind == "" {
					return fmt.Errorf("row %d has no kind", start+i)
				}
				if i > 0 {
					q.WriteString(", ")
				}
				q.WriteString("(?, ?, ?::timestamptz, ?, ?, ?, ?::numeric, ?::jsonb)")
				var amount, data any
				if r.Amount != "" {
					amount = r.Amount
				}
				if len(r.Data) > 0 {
					data = string(r.Data)
				}
				args = append(args, chainID, height, ts, r.Kind, r.Key, r.Denom, amount, data)
			}
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return fmt.Errorf("insert: %w", err)
			}
		}
		return pruneHolders(ctx, tx, chainID, height, rows)
	})
	if err != nil {
		return fmt.Errorf("store snapshot of %s at %d: %w", chainID, height, err)
	}
	return nil
}

// LastHeight is the height of the newest stored snapshot of chainID, 0 when
// there is none.
func LastHeight(ctx context.Context, db bun.IDB, chainID string) (int64, error) {
	var h int64
	if err := db.NewRaw("SELECT coalesce(max(height), 0) FROM state_snapshots WHERE chain_id = ?", chainID).Scan(ctx, &h); err != nil {
		return 0, fmt.Errorf("last snapshot of %s: %w", chainID, err)
	}
	return h, nil
}

// Range returns the heights of the first and the newest stored snapshot of
// chainID (0, 0 when there is none): where a pruned node let them start.
func Range(ctx context.Context, db bun.IDB, chainID string) (first, last int64, err error) {
	if err := db.NewRaw("SELECT coalesce(min(height), 0), coalesce(max(height), 0) FROM state_snapshots WHERE chain_id = ?", chainID).
		Scan(ctx, &first, &last); err != nil {
		return 0, 0, fmt.Errorf("snapshots of %s: %w", chainID, err)
	}
	return first, last, nil
}

// ErrNoSnapshot means no snapshot of the kind exists at or before the time asked.
var ErrNoSnapshot = errors.New("no snapshot")

// Snapshot is the part of one stored snapshot Latest returns.
type Snapshot struct {
	Height int64
	Time   time.Time
	// Rows are the kind's rows ordered by key and denom; none when the kind
	// was taken and empty. Data is as jsonb prints it.
	Rows []Row
}

// Latest returns the newest snapshot of chainID at or before at in which
// kind was taken (snapshots that skipped it do not count), with that
// kind's rows. It costs two index probes: the partial index on the taken
// markers finds the height, the primary key the rows. ErrNoSnapshot when
// there is none.
func Latest(ctx context.Context, db bun.IDB, chainID, kind string, at time.Time) (Snapshot, error) {
	var s Snapshot
	err := db.NewRaw(`SELECT height, time FROM state_snapshots
		WHERE chain_id = ? AND kind = ? AND key = ? AND time <= ?
		ORDER BY time DESC, height DESC LIMIT 1`, chainID, KindTaken, kind, at.UTC()).Scan(ctx, &s.Height, &s.Time)
	if errors.Is(err, sql.ErrNoRows) {
		return Snapshot{}, fmt.Errorf("%s of %s at or before %s: %w", kind, chainID, at.UTC().Format(time.RFC3339), ErrNoSnapshot)
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("latest %s snapshot of %s: %w", kind, chainID, err)
	}
	s.Rows, err = Rows(ctx, db, chainID, s.Height, kind)
	if err != nil {
		return Snapshot{}, err
	}
	return s, nil
}

// Rows reads the stored rows of the snapshot of chainID at height, of one
// kind or of every kind (kind ""), ordered by kind, key and denom.
func Rows(ctx context.Context, db bun.IDB, chainID string, height int64, kind string) ([]Row, error) {
	q := `SELECT kind, key, denom, coalesce(amount::text, '') AS amount, coalesce(data::text, '') AS data
		FROM state_snapshots WHERE chain_id = ? AND height = ?`
	args := []any{chainID, height}
	if kind != "" {
		q += " AND kind = ?"
		args = append(args, kind)
	}
	var got []struct {
		Kind   string `bun:"kind"`
		Key    string `bun:"key"`
		Denom  string `bun:"denom"`
		Amount string `bun:"amount"`
		Data   string `bun:"data"`
	}
	if err := db.NewRaw(q+" ORDER BY kind, key, denom", args...).Scan(ctx, &got); err != nil {
		return nil, fmt.Errorf("snapshot rows of %s at %d: %w", chainID, height, err)
	}
	rows := make([]Row, len(got))
	for i, g := range got {
		rows[i] = Row{Kind: g.Kind, Key: g.Key, Denom: g.Denom, Amount: g.Amount}
		if g.Data != "" {
			rows[i].Data = []byte(g.Data)
		}
	}
	return rows, nil
}

// pruneHolders deletes the holder lists of the denoms stored at height
// from older snapshots of the chain (holder lists are large; only the
// newest is read).
func pruneHolders(ctx context.Context, tx bun.Tx, chainID string, height int64, rows []Row) error {
	var keys []string
	for _, r := range rows {
		if r.Kind == KindTaken && len(r.Key) > len(KindHolder)+1 && r.Key[:len(KindHolder)+1] == KindHolder+":" {
			keys = append(keys, r.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	denoms := make([]string, len(keys))
	for i, k := range keys {
		denoms[i] = k[len(KindHolder)+1:]
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM state_snapshots WHERE chain_id = ? AND height < ?
		AND ((kind = ? AND denom = ANY(?::text[])) OR (kind IN (?, ?) AND key = ANY(?::text[])))`,
		chainID, height, KindHolder, pgdialect.Array(denoms), KindTaken, KindSkipped, pgdialect.Array(keys)); err != nil {
		return fmt.Errorf("prune older holder lists: %w", err)
	}
	return nil
}
