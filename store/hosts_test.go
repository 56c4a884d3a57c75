package store_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/chainlens/chainlens/internal/testcluster"
	"github.com/chainlens/chainlens/store"
)

// TestSplitHosts: libpq's multi-host URL form, parsed as libpq does.
func TestSplitHosts(t *testing.T) {
	for _, c := range []struct {
		url, hosts, single, attrs, err string
	}{
		{"postgres://u@h:5432/db?sslmode=disable", "h:5432", "postgres://u@h:5432/db?sslmode=disable", "any", ""},
		{"postgres://u:p@a:1,b:2/db?sslmode=disable&target_session_attrs=read-write", "a:1 b:2", "postgres://u:p@a:1/db?sslmode=disable", "read-write", ""},
		{"postgresql://a,b:6/db?target_session_attrs=prefer-standby", "a:5432 b:6", "postgresql://a:5432/db", "prefer-standby", ""},
		{"postgres://u@a:1,,b:2/db", "", "", "", "an empty host in the host list"},
		{"postgres://u@a:1/db?target_session_attrs=master", "", "", "", `target_session_attrs "master"`},
		{"mysql://u@a/db", "", "", "", "want postgres://"},
		{"postgres://u:p@ss@a:1,b:2/db?target_session_attrs=primary", "a:1 b:2", "postgres://u:p%40ss@a:1/db", "primary", ""},
		{"postgres://u@a:1,b:2?sslmode=disable&target_session_attrs=read-write", "a:1 b:2", "postgres://u@a:1/?sslmode=disable", "read-write", ""},
	} {
		hosts, single, attrs, err := store.SplitHosts(c.url)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.url, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if got := strings.Join(hosts, " "); got != c.hosts || single != c.single || attrs != c.attrs {
			t.Errorf("%s: hosts %q single %q attrs %q, want %q %q %q", c.url, got, single, attrs, c.hosts, c.single, c.attrs)
		}
	}
}

// TestFailoverURLFindsThePrimary: a URL listing every server of a real
// replicated cluster with target_session_attrs=read-write connects to the
// primary, and to the promoted replica after a failover; a URL whose only
// server is a replica is refused as Unavailable (a failover in progress),
// not as a bad statement.
func TestFailoverURLFindsThePrimary(t *testing.T) {
	ctx := context.Background()
	c := testcluster.Start(t, 1, false)

	_, err := store.Open(ctx, c.Reads[0]+"&target_session_attrs=read-write", 2)
	if !errors.Is(err, store.ErrNoTargetServer) || !store.Unavailable(err) {
		t.Fatalf("a replica alone as read-write: %v; want ErrNoTargetServer, Unavailable", err)
	}
	standby, err := store.Open(ctx, strings.Replace(c.Failover, "read-write", "standby", 1), 2)
	if err != nil {
		t.Fatal(err)
	}
	var recovery bool
	if err := standby.NewRaw("SELECT pg_is_in_recovery()").Scan(ctx, &recovery); err != nil || !recovery {
		t.Fatalf("target_session_attrs=standby reached a server in recovery %v (%v); want true", recovery, err)
	}
	_ = standby.Close()

	db := c.Open(t, c.Failover)
	// The data-change listener follows the primary across the failover.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes := store.NewChanges()
	go func() { _ = changes.Run(ctx, db, slog.New(slog.DiscardHandler)) }()
	announced := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if changes.Listening() {
				seq := changes.Seq()
				if err := pgdriver.Notify(ctx, db, store.ChangesChannel, "chain-x"); err == nil {
					for until := time.Now().Add(2 * time.Second); time.Now().Before(until); time.Sleep(10 * time.Millisecond) {
						if changes.AnnouncedSince(seq, "chain-x") {
							return
						}
					}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no announcement received (listening %v)", what, changes.Listening())
			}
		}
	}
	announced("before the failover")
	port := func() int {
		t.Helper()
		var p int
		if err := db.NewRaw("SELECT inet_server_port()").Scan(ctx, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := port()
	if _, err := db.ExecContext(ctx, "CREATE TABLE written (x int); INSERT INTO written VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	c.WaitReplayed(t)
	c.Promote(t)
	// The pooled connections to the stopped primary fail (Unavailable);
	// new ones find the promoted replica.
	for i := 0; ; i++ {
		_, err := db.ExecContext(ctx, "INSERT INTO written VALUES (2)")
		if err == nil {
			break
		}
		if !store.Unavailable(err) || i == 20 {
			t.Fatalf("write after failover: %v (Unavailable: %v)", err, store.Unavailable(err))
		}
	}
	if second := port(); second == first {
		t.Fatalf("still on port %d after the failover", first)
	}
	var n int
	if err := db.NewRaw("SELECT count(*) FROM written").Scan(ctx, &n); err != nil || n != 2 {
		t.Fatalf("rows after failover: %d, %v; want 2", n, err)
	}
	announced("after the failover")
}
