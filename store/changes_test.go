package store_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// TestChangesFollowsCommits: the triggers announce every commit of indexed
// or report data, per chain; a lost connection makes every earlier read
// outdated and listening resumes.
func TestChangesFollowsCommits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, _ := testdb.New(t)
	if err := store.EnsurePartitions(ctx, db, "a", []string{"blocks"}, 1, 10); err != nil {
		t.Fatal(err)
	}
	c := store.NewChanges()
	done := make(chan struct{})
	go func() { _ = c.Run(ctx, db, slog.New(slog.DiscardHandler)); close(done) }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("listening", c.Listening)

	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	steps := []struct {
		name    string
		sql     string
		changed map[string]bool // chain -> announced changed; "" = an unrelated chain
	}{
		{"a height of chain a", `INSERT INTO blocks VALUES ('a', 1, 'h', now(), 'p', 'x', 0)`, map[string]bool{"a": true, "b": false}},
		{"checkpoint of chain b", `INSERT INTO sync_state (chain_id, kind, next_height) VALUES ('b', 'cosmos', 5)`, map[string]bool{"a": false, "b": true}},
		{"a failed aggregator run", `INSERT INTO aggregator_jobs (name, last_error) VALUES ('j', 'boom')`, map[string]bool{"a": false, "b": false}},
		{"an aggregator run", `UPDATE aggregator_jobs SET watermark = 7, last_error = NULL`, map[string]bool{"a": true, "b": true, "c": true}},
		{"an aggregator run that changed nothing", `UPDATE aggregator_jobs SET last_run_at = now(), last_rows = 0`, map[string]bool{"a": false, "b": false}},
		{"an aggregator run that wrote rows", `UPDATE aggregator_jobs SET last_rows = 3`, map[string]bool{"a": true}},
		{"an engagement job run", `INSERT INTO aggregator_jobs (name) VALUES ('engagement_audiences'); UPDATE aggregator_jobs SET watermark = 99, last_rows = 5 WHERE name = 'engagement_audiences'`, map[string]bool{"a": false, "b": false}},
		{"a rolled back height", `BEGIN; INSERT INTO blocks VALUES ('a', 2, 'h', now(), 'p', 'x', 0); ROLLBACK`, map[string]bool{"a": false}},
	}
	for _, s := range steps {
		before := c.Seq()
		exec(s.sql)
		// A ping after the statement: once it is seen (Seq moves past the
		// announcements sent before it), the statement's are in.
		exec(`INSERT INTO sync_state (chain_id, kind, next_height) VALUES ('marker', 'cosmos', 1)
			ON CONFLICT (chain_id) DO UPDATE SET next_height = sync_state.next_height + 1`)
		// Only the marker's own announcement (a "*" of the step would
		// satisfy ChangedSince before the marker arrived, and the marker
		// would then end the next step's wait early).
		waitFor(s.name+" marker", func() bool { return c.AnnouncedSince(before, "marker") })
		for chain, want := range s.changed {
			if got := c.ChangedSince(before, []string{chain}); got != want {
				t.Errorf("%s: chain %s changed = %v, want %v", s.name, chain, got, want)
			}
		}
	}

	// The listening connection dies: every earlier read is outdated, and
	// announcements flow again on a new connection.
	before := c.Seq()
	exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`)
	waitFor("loss noticed", func() bool { return c.ChangedSince(before, []string{"z"}) })
	waitFor("listening again", c.Listening)
	after := c.Seq()
	exec(`INSERT INTO blocks VALUES ('a', 3, 'h', now(), 'p', 'x', 0)`)
	waitFor("announcement after reconnecting", func() bool { return c.ChangedSince(after, []string{"a"}) })
	cancel()
	<-done
	if c.Listening() {
		t.Error("still listening after Run returned")
	}
}
