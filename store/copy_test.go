package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

func TestCopyRowsRoundTripsEveryType(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	if _, err := db.ExecContext(ctx, `CREATE TABLE c (s text, n bigint, b boolean, t timestamptz, j jsonb, raw bytea, arr text[], num numeric)`); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 21, 21, 27, 47, 839430000, time.UTC)
	rows := [][]any{
		{"tab\there\nnew\\line\rcr", int64(-5), true, when, json.RawMessage(`{"k":"v\\n\u00e9"}`), []byte{0, 1, 0xff}, []string{`a"b`, `c\d`, "e,f", ""}, "123456789012345678901234567890.5"},
		{nil, 0, false, when, json.RawMessage(nil), []byte(nil), []string{}, "0"},
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n, err := store.CopyRows(ctx, conn, "c", []string{"s", "n", "b", "t", "j", "raw", "arr", "num"}, rows)
	if err != nil || n != 2 {
		t.Fatalf("copied %d, %v", n, err)
	}
	var got struct {
		S   string    `bun:"s"`
		N   int64     `bun:"n"`
		B   bool      `bun:"b"`
		T   time.Time `bun:"t"`
		J   string    `bun:"j"`
		Raw []byte    `bun:"raw"`
		Arr []string  `bun:"arr,array"`
		Num string    `bun:"num"`
	}
	if err := db.NewRaw("SELECT s, n, b, t, j::text AS j, raw, arr, num::text AS num FROM c WHERE s IS NOT NULL").Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if got.S != "tab\there\nnew\\line\rcr" || got.N != -5 || !got.B || !got.T.Equal(when) || got.J != `{"k": "v\\né"}` ||
		string(got.Raw) != "\x00\x01\xff" || len(got.Arr) != 4 || got.Arr[0] != `a"b` || got.Arr[1] != `c\d` || got.Arr[2] != "e,f" || got.Num != "123456789012345678901234567890.5" {
		t.Fatalf("round trip: %+v", got)
	}
	var nulls int
	if err := db.NewRaw("SELECT count(*) FROM c WHERE s IS NULL AND j IS NULL AND raw IS NULL AND arr = '{}'").Scan(ctx, &nulls); err != nil || nulls != 1 {
		t.Fatalf("null row: %d %v", nulls, err)
	}
	if _, err := store.CopyRows(ctx, conn, "c", []string{"s"}, [][]any{{1.5}}); err == nil {
		t.Fatal("a float must be refused (amounts are never floats)")
	}
}

// TestEnsurePartitionsConcurrently reproduces `make run`'s first start:
// several indexers creating the same partitions at once must all succeed.
func TestEnsurePartitionsConcurrently(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			errs <- store.EnsurePartitions(ctx, db, "x", []string{"blocks", "txs", "events", "messages", "osmosis_swaps"}, 1, 2_500_000)
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// The raw tables get the chain's part, three height partitions under
	// it; a domain table three shared height partitions.
	var n int
	if err := db.NewRaw(`SELECT count(*) FROM pg_inherits i JOIN pg_inherits j ON j.inhparent = i.inhrelid
		JOIN pg_class c ON c.oid = i.inhparent WHERE c.relname IN ('blocks','txs','events','messages')`).Scan(ctx, &n); err != nil || n != 12 {
		t.Fatalf("raw partitions = %d (%v), want 12", n, err)
	}
	if err := db.NewRaw("SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent WHERE c.relname = 'osmosis_swaps'").Scan(ctx, &n); err != nil || n != 3 {
		t.Fatalf("osmosis_swaps partitions = %d (%v), want 3", n, err)
	}
}

// A NUL in JSON text is dropped, as jsonb refuses it; the rest is kept.
func TestJSONB(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"memo":"a\u0000b"}`, `{"memo":"ab"}`},
		{`{"memo":"ab"}`, `{"memo":"ab"}`},
		{`["\u0000","\u0000"]`, `["",""]`},
	}
	for _, tc := range tests {
		if got := store.JSONB([]byte(tc.in)); got != tc.want {
			t.Errorf("JSONB(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
