package store_test

import (
	"context"
	"testing"

	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// BenchmarkCopyNarrowRows measures COPY of narrow rows (the ceiling the
// indexer's writer is compared with).
func BenchmarkCopyNarrowRows(b *testing.B) {
	ctx := context.Background()
	db, _ := testdb.New(b)
	if _, err := db.ExecContext(ctx, "CREATE UNLOGGED TABLE narrow (chain_id text, height bigint, idx int, v text)"); err != nil {
		b.Fatal(err)
	}
	const n = 100_000
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{"localosmosis", int64(i / 100), i % 100, "transfer"}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	b.ResetTimer()
	for b.Loop() {
		if _, err := store.CopyRows(ctx, conn, "narrow", []string{"chain_id", "height", "idx", "v"}, rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}
