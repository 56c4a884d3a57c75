package store_test

import (
	"context"
	"testing"

	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

func TestMigrateUpTwiceIsNoopAndDownReverts(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t) // applies every migration once

	applied, err := store.Migrate(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 0 {
		t.Fatalf("second migrate up applied %v, want nothing", applied)
	}
	current, err := store.SchemaCurrent(ctx, db)
	if err != nil || !current {
		t.Fatalf("SchemaCurrent = %v, %v; want true", current, err)
	}

	var n int
	if err := db.NewRaw("SELECT count(*) FROM information_schema.tables WHERE table_name IN ('api_keys','api_key_usage')").Scan(ctx, &n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("platform tables = %d, want 2", n)
	}

	reverted, err := store.Rollback(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(reverted) == 0 {
		t.Fatal("rollback reverted nothing")
	}
	t.Logf("reverted %v", reverted)
	current, err = store.SchemaCurrent(ctx, db)
	if err != nil || current {
		t.Fatalf("after rollback SchemaCurrent = %v, %v; want false", current, err)
	}
	if _, err := store.Migrate(ctx, db); err != nil {
		t.Fatalf("re-apply after rollback: %v", err)
	}
}

// TestSessionsAreUTC: the test databases default to America/New_York (see
// testdb.New); a connection opened by Open works in UTC all the same, so
// day and month buckets computed in SQL are UTC ones.
func TestSessionsAreUTC(t *testing.T) {
	_, url := testdb.New(t)
	// A connection parameter of the URL is kept alongside.
	db, err := store.Open(context.Background(), url+"&statement_timeout=12345", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var timeout string
	if err := db.NewRaw("SHOW statement_timeout").Scan(context.Background(), &timeout); err != nil || timeout != "12345ms" {
		t.Errorf("statement_timeout from the URL: %q %v", timeout, err)
	}
	var r struct {
		TZ    string `bun:"tz"`
		Day   string `bun:"day"`
		Month string `bun:"month"`
	}
	if err := db.NewRaw(`SELECT current_setting('TimeZone') AS tz,
		to_char(date_trunc('day', timestamptz '2026-06-01 02:00:00+00'), 'YYYY-MM-DD HH24:MI:SS') AS day,
		to_char(timestamptz '1970-01-01 00:00:00+00' + make_interval(months => 665), 'YYYY-MM-DD HH24:MI:SS') AS month`).
		Scan(context.Background(), &r); err != nil {
		t.Fatal(err)
	}
	if r.TZ != "UTC" || r.Day != "2026-06-01 00:00:00" || r.Month != "2025-06-01 00:00:00" {
		t.Fatalf("session %+v; want UTC, 2026-06-01 00:00:00, 2025-06-01 00:00:00", r)
	}
}
