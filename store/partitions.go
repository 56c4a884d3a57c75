package store

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
)

// PartitionSpan is the number of heights in one partition of a raw or
// domain table.
const PartitionSpan = 1_000_000

// ChainPartitioned are the raw tables partitioned by chain, then by height
// (migration 20261128000016): retention drops a chain's old partitions.
// The other height-partitioned tables hold every chain in each partition.
var ChainPartitioned = []string{"blocks", "txs", "messages", "events", "message_addresses", "commit_votes"}

// IsChainPartitioned reports whether table is one of ChainPartitioned.
func IsChainPartitioned(table string) bool { return slices.Contains(ChainPartitioned, table) }

// chainPart is the name of the part of a chain-partitioned table that
// holds chainID's rows (chainlens_chain_partitions names it so).
func chainPart(table, chainID string) string {
	sum := md5.Sum([]byte(chainID))
	return table + "_" + hex.EncodeToString(sum[:])[:10]
}

// partitionName is the name of the partition of table holding the heights
// of partition number n (height / PartitionSpan), of chainID's part for a
// chain-partitioned table.
func partitionName(table, chainID string, n int64) string {
	if IsChainPartitioned(table) {
		return chainPart(table, chainID) + "_p" + strconv.FormatInt(n, 10)
	}
	return table + "_p" + strconv.FormatInt(n, 10)
}

// EnsurePartitions creates the partitions of tables covering the heights
// [from, to] of chainID if they do not exist yet: chainID's own partitions
// of a chain-partitioned table, the shared ones of the others. It runs
// outside the batch transaction (DDL takes strong locks) and is
// idempotent.
func EnsurePartitions(ctx context.Context, db bun.IDB, chainID string, tables []string, from, to int64) error {
	var names []string
	for _, t := range tables {
		for n := from / PartitionSpan; n <= to/PartitionSpan; n++ {
			names = append(names, partitionName(t, chainID, n))
		}
	}
	var existing int
	if err := db.NewRaw("SELECT count(*) FROM pg_class WHERE relname IN (?) AND relnamespace = current_schema()::regnamespace", bun.List(names)).
		Scan(ctx, &existing); err != nil {
		return fmt.Errorf("look up partitions: %w", err)
	}
	if existing == len(names) {
		return nil
	}
	// Concurrent CREATE TABLE IF NOT EXISTS of the same partition can still
	// fail with "already exists": indexers of several chains serialise on a
	// transaction-level advisory lock. Each table's partitions are created
	// in a transaction of their own: DDL locks its parent table until
	// commit, and a transaction holding one parent while it waits for
	// another that a reader holds would deadlock with a reader (an
	// aggregator job reading several raw tables) that then wants the first.
	for _, t := range tables {
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext('chainlens-partitions'))"); err != nil {
				return fmt.Errorf("lock partitions: %w", err)
			}
			if IsChainPartitioned(t) {
				if _, err := tx.ExecContext(ctx, "SELECT chainlens_chain_partitions(?, ?, ?, ?, ?)", t, chainID, from, to, PartitionSpan); err != nil {
					return fmt.Errorf("create partitions of %s for %s: %w", t, chainID, err)
				}
				return nil
			}
			for n := from / PartitionSpan; n <= to/PartitionSpan; n++ {
				q := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s PARTITION OF %s FOR VALUES FROM (%d) TO (%d)", partitionName(t, chainID, n), t, n*PartitionSpan, (n+1)*PartitionSpan)
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("create partition %s: %w", partitionName(t, chainID, n), err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// RawPartition is one height partition of a chain's raw table.
type RawPartition struct {
	Table string
	Name  string
	From  int64 // first height
	To    int64 // first height of the next partition
}

// RawPartitions lists chainID's partitions of the chain-partitioned
// tables, lowest heights first.
func RawPartitions(ctx context.Context, db bun.IDB, chainID string) ([]RawPartition, error) {
	var out []RawPartition
	for _, t := range ChainPartitioned {
		parent := chainPart(t, chainID)
		var names []string
		if err := db.NewRaw(`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			WHERE i.inhparent = to_regclass(?)`, parent).Scan(ctx, &names); err != nil {
			return nil, fmt.Errorf("partitions of %s: %w", parent, err)
		}
		for _, n := range names {
			num, err := strconv.ParseInt(strings.TrimPrefix(n, parent+"_p"), 10, 64)
			if err != nil {
				continue // not one of ours
			}
			out = append(out, RawPartition{Table: t, Name: n, From: num * PartitionSpan, To: (num + 1) * PartitionSpan})
		}
	}
	slices.SortFunc(out, func(a, b RawPartition) int {
		if a.From != b.From {
			return int(a.From - b.From)
		}
		return strings.Compare(a.Table, b.Table)
	})
	return out, nil
}

// PrunedBelow is the height below which retention dropped chainID's raw
// rows (0: nothing dropped).
func PrunedBelow(ctx context.Context, db bun.IDB, chainID string) (int64, error) {
	var h int64
	err := db.NewRaw("SELECT coalesce((SELECT pruned_below FROM raw_retention WHERE chain_id = ?), 0)", chainID).Scan(ctx, &h)
	if err != nil {
		return 0, fmt.Errorf("retention of %s: %w", chainID, err)
	}
	return h, nil
}

// DropRawBelow drops every partition of chainID's raw tables whose heights
// all lie below bound, and records the new pruned height, in one
// transaction that waits at most 5 s for its locks (a long read of a
// partition makes it try again later rather than stall the readers queued
// behind it). It returns what it dropped.
func DropRawBelow(ctx context.Context, db *bun.DB, chainID string, bound int64) ([]RawPartition, error) {
	parts, err := RawPartitions(ctx, db, chainID)
	if err != nil {
		return nil, err
	}
	var drop []RawPartition
	below := int64(0)
	for _, p := range parts {
		if p.To <= bound {
			drop = append(drop, p)
			below = max(below, p.To)
		}
	}
	if len(drop) == 0 {
		return nil, nil
	}
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '5s'"); err != nil {
			return err
		}
		for _, p := range drop {
			if _, err := tx.NewRaw("DROP TABLE ?", bun.Ident(p.Name)).Exec(ctx); err != nil {
				return fmt.Errorf("drop %s: %w", p.Name, err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO raw_retention (chain_id, pruned_below) VALUES (?, ?)
			ON CONFLICT (chain_id) DO UPDATE SET pruned_below = greatest(raw_retention.pruned_below, EXCLUDED.pruned_below), pruned_at = now()`, chainID, below)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("retention of %s: %w", chainID, err)
	}
	return drop, nil
}
