package indexer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/store"
	"github.com/uptrace/bun"
)

// Checkpoint is a chain's sync state.
type Checkpoint struct {
	ChainID    string    `bun:"chain_id"`
	Kind       string    `bun:"kind"`
	NextHeight int64     `bun:"next_height"`
	LastTime   time.Time `bun:"last_time"`
	TipHeight  int64     `bun:"tip_height"`
	UpdatedAt  time.Time `bun:"updated_at"`
}

// ErrNoCheckpoint means the chain has never been indexed.
var ErrNoCheckpoint = errors.New("no checkpoint")

// LoadCheckpoint reads a chain's checkpoint.
func LoadCheckpoint(ctx context.Context, db bun.IDB, chainID string) (Checkpoint, error) {
	var c Checkpoint
	err := db.NewRaw(`SELECT chain_id, kind, next_height, coalesce(last_time, 'epoch') AS last_time, coalesce(tip_height, 0) AS tip_height, updated_at
		FROM sync_state WHERE chain_id = ?`, chainID).Scan(ctx, &c)
	if errors.Is(err, sql.ErrNoRows) {
		return Checkpoint{}, ErrNoCheckpoint
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("load checkpoint of %s: %w", chainID, err)
	}
	return c, nil
}

// DeadLetter is a height that kept failing.
type DeadLetter struct {
	ChainID     string    `bun:"chain_id"`
	Height      int64     `bun:"height"`
	Attempts    int       `bun:"attempts"`
	LastError   string    `bun:"last_error"`
	NextRetryAt time.Time `bun:"next_retry_at"`
}

// DeadLetters lists a chain's dead letters, lowest height first; dueOnly
// keeps those whose retry time has come.
func DeadLetters(ctx context.Context, db bun.IDB, chainID string, dueOnly bool) ([]DeadLetter, error) {
	var out []DeadLetter
	q := `SELECT chain_id, height, attempts, last_error, next_retry_at FROM dead_letters WHERE chain_id = ?`
	if dueOnly {
		q += ` AND next_retry_at <= now()`
	}
	if err := db.NewRaw(q+` ORDER BY height`, chainID).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("dead letters of %s: %w", chainID, err)
	}
	return out, nil
}

// DeadLetterStats counts a chain's dead letters and gives the lowest of
// their heights (0 when there are none).
func DeadLetterStats(ctx context.Context, db bun.IDB, chainID string) (n, lowest int64, err error) {
	var r struct {
		N      int64 `bun:"n"`
		Lowest int64 `bun:"lowest"`
	}
	if err := db.NewRaw("SELECT count(*) AS n, coalesce(min(height), 0) AS lowest FROM dead_letters WHERE chain_id = ?", chainID).Scan(ctx, &r); err != nil {
		return 0, 0, fmt.Errorf("dead letters of %s: %w", chainID, err)
	}
	return r.N, r.Lowest, nil
}

// lockWait is how long LockChain waits for a chain's lock: a process that
// was just killed holds it until Postgres notices its connection is gone.
const lockWait = 10 * time.Second

// LockChain takes a session advisory lock so that one process indexes a
// chain (of any kind), waiting up to lockWait for a process that holds it;
// the returned function releases it. The returned context carries the
// lock: AdvanceCheckpoint under it moves a checkpoint only while the lock
// is held (a failover to a replica takes the old primary's locks with it,
// silently for a session that is idle then).
func LockChain(ctx context.Context, db *bun.DB, chainID string) (context.Context, func(), error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("indexer %s: %w", chainID, err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		var ok bool
		if err := conn.NewRaw("SELECT pg_try_advisory_lock(hashtext('chainlens-indexer'), hashtext(?))", chainID).Scan(ctx, &ok); err != nil {
			conn.Close()
			return nil, nil, fmt.Errorf("indexer %s: lock: %w", chainID, err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			conn.Close()
			return nil, nil, fmt.Errorf("indexer %s: another process is indexing this chain", chainID)
		}
		select {
		case <-ctx.Done():
			conn.Close()
			return nil, nil, fmt.Errorf("indexer %s: lock: %w", chainID, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	var pid int32
	if err := conn.NewRaw("SELECT pg_backend_pid()").Scan(ctx, &pid); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("indexer %s: lock: %w", chainID, err)
	}
	return context.WithValue(ctx, chainLockKey{}, chainLock{chainID: chainID, pid: pid}), func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext('chainlens-indexer'), hashtext(?))", chainID)
		conn.Close()
	}, nil
}

// chainLock is the indexing lock of a chain held by the session of
// backend pid.
type chainLock struct {
	chainID string
	pid     int32
}

type chainLockKey struct{}

// checkChainLock returns store.ErrLockLost when ctx carries the lock of
// chainID and its session no longer holds it on the server conn talks to.
func checkChainLock(ctx context.Context, conn bun.IConn, chainID string) error {
	l, ok := ctx.Value(chainLockKey{}).(chainLock)
	if !ok || l.chainID != chainID {
		return nil
	}
	var held bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = ?
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = hashtext('chainlens-indexer')::oid AND objid = hashtext(?)::oid AND objsubid = 2)`, l.pid, chainID).Scan(&held); err != nil {
		return fmt.Errorf("check the indexing lock: %w", err)
	}
	if !held {
		return fmt.Errorf("indexer %s: %w", chainID, store.ErrLockLost)
	}
	return nil
}

// Import is the record of a chain's opening state (see
// chains.GenesisAdapter and Cosmos.State).
type Import struct {
	// InitialHeight is the first height the opening balances hold at.
	InitialHeight int64 `bun:"initial_height"`
	BalanceRows   int64 `bun:"balance_rows"`
	// StateHeight is the height of the node state imported, 0 for the
	// genesis.
	StateHeight int64 `bun:"state_height"`
}

// GenesisImport is the record of a chain's opening state: its genesis, or
// the node's state before its first indexed height; ok is false when
// neither was imported (its balances before the first indexed height are
// unknown).
func GenesisImport(ctx context.Context, db bun.IDB, chainID string) (Import, bool, error) {
	var r Import
	err := db.NewRaw("SELECT initial_height, balance_rows, coalesce(state_height, 0) AS state_height FROM genesis_imports WHERE chain_id = ?", chainID).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("genesis import of %s: %w", chainID, err)
	}
	return r, true, nil
}

// ImportedPart is one part of the state imported at the height before a
// chain's first indexed height (state_imports): bank, staking, or an
// adapter's opening query (its path).
type ImportedPart struct {
	Part   string `bun:"part"`
	Height int64  `bun:"height"`
	Rows   int64  `bun:"rows"`
}

// StateImports lists the parts of chainID's state imported at the height
// before its first indexed height, by part.
func StateImports(ctx context.Context, db bun.IDB, chainID string) ([]ImportedPart, error) {
	var out []ImportedPart
	if err := db.NewRaw("SELECT part, height, rows FROM state_imports WHERE chain_id = ? ORDER BY part", chainID).Scan(ctx, &out); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("state imports of %s: %w", chainID, err)
	}
	return out, nil
}
