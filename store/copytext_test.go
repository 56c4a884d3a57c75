package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// TestCopyTextInChunks copies ~20 MB of COPY text, with one row longer
// than a chunk, from a reader and from chunks held in memory: every row arrives once and whole, in several
// COPY statements, and the rows EncodeCopyRow wrote read back as CopyRows'.
func TestCopyTextInChunks(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	if _, err := db.ExecContext(ctx, `CREATE TABLE ct (n bigint, s text, j jsonb, t timestamptz)`); err != nil {
		t.Fatal(err)
	}
	cols := []string{"n", "s", "j", "t"}
	when := time.Date(2026, 11, 21, 0, 0, 0, 5000, time.UTC)
	var text bytes.Buffer
	var want, wantLen int64
	for i := int64(0); text.Len() < 20<<20; i++ {
		s := strings.Repeat("x", int(i%300)) + "\ttab\nnewline\\"
		if i == 1000 {
			s = strings.Repeat("long", store.CopyChunkBytes/4+10) // one row longer than a chunk
		}
		if err := store.EncodeCopyRow(&text, cols, []any{i, s, json.RawMessage(`{"i":1}`), when}); err != nil {
			t.Fatal(err)
		}
		want++
		wantLen += int64(len(s))
	}
	if err := store.EncodeCopyRow(&text, cols, []any{int64(1)}); err == nil {
		t.Fatal("a row with too few values must be refused")
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The same text read from one reader (CopyText), and held as chunks of
	// whole rows (CopyChunks: 500 rows each, the long row alone in one).
	var chunks [][]byte
	lines := bytes.SplitAfter(text.Bytes(), []byte("\n"))
	for i := 0; i < len(lines); i += 500 {
		chunks = append(chunks, bytes.Join(lines[i:min(i+500, len(lines))], nil))
	}
	for _, c := range []struct {
		name string
		copy func() (int64, error)
	}{
		{"CopyText", func() (int64, error) { return store.CopyText(ctx, conn, "ct", cols, bytes.NewReader(text.Bytes())) }},
		{"CopyChunks", func() (int64, error) { return store.CopyChunks(ctx, conn, "ct", cols, chunks) }},
	} {
		if _, err := conn.ExecContext(ctx, "TRUNCATE ct"); err != nil {
			t.Fatal(err)
		}
		n, err := c.copy()
		if err != nil || n != want {
			t.Fatalf("%s: copied %d rows of %d: %v", c.name, n, want, err)
		}
		var got struct {
			N, Distinct, Len, Times int64
		}
		if err := db.NewRaw(`SELECT count(*) AS n, count(DISTINCT n) AS distinct, sum(length(s)) AS len, count(*) FILTER (WHERE t = ?) AS times FROM ct`, when).
			Scan(ctx, &got.N, &got.Distinct, &got.Len, &got.Times); err != nil {
			t.Fatal(err)
		}
		if got.N != want || got.Distinct != want || got.Len != wantLen || got.Times != want {
			t.Fatalf("%s: read back %+v, want %d rows of %d characters", c.name, got, want, wantLen)
		}
	}
	if n, err := store.CopyChunks(ctx, conn, "ct", cols, [][]byte{nil, {}}); err != nil || n != 0 {
		t.Fatalf("empty chunks: %d %v", n, err)
	}
	// Empty input copies nothing.
	if n, err := store.CopyText(ctx, conn, "ct", cols, strings.NewReader("")); err != nil || n != 0 {
		t.Fatalf("empty: %d %v", n, err)
	}
}
