// Package testdb gives each test its own fresh, migrated Postgres database
// on the real server (never a mock): CHAINLENS_TEST_DATABASE_URL, else
// DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres names the
// server and an administrative database used to create and drop test databases.
package testdb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/migrations"
	"github.com/chainlens/chainlens/store"
)

// AdminURL is the URL of the administrative database tests connect to first.
func AdminURL() string {
	for _, k := range []string{"CHAINLENS_TEST_DATABASE_URL", "DATABASE_URL"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9_]+`)

// New creates a fresh database named after the test, applies every
// migration and returns it with its URL; the database is dropped when the
// test ends.
func New(t testing.TB) (*bun.DB, string) {
	t.Helper()
	return newFrom(t, "", nil)
}

// NewFrom is New for a database that starts as a copy of one built by
// build on a migrated database, once per server, migration fingerprint and
// key (a recording indexed through the real indexer, say): the tests of
// every package that need the same data share one build. build must leave
// no connection to the database it was given open.
func NewFrom(t testing.TB, key string, build func(db *bun.DB)) *bun.DB {
	t.Helper()
	db, _ := newFrom(t, key, build)
	return db
}

func newFrom(t testing.TB, key string, build func(db *bun.DB)) (*bun.DB, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Postgres (not run with -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	admin, err := store.Open(ctx, AdminURL(), 2)
	if err != nil {
		t.Fatalf("testdb: %v (is Postgres running? `make test` starts it)", err)
	}
	defer admin.Close()

	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	base := unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "_")
	if len(base) > 40 {
		base = base[:40]
	}
	name := fmt.Sprintf("cl_test_%s_%s", base, hex.EncodeToString(suffix))
	tmpl, err := template(ctx, admin)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	if build != nil {
		if tmpl, err = derived(ctx, admin, tmpl, key, func(db *bun.DB) { build(db) }); err != nil {
			t.Fatalf("testdb: %v", err)
		}
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tmpl); err != nil {
		t.Fatalf("testdb: create database %s: %v", name, err)
	}
	// A database whose default time zone is not UTC: every connection the
	// service opens must still bucket time in UTC (store.Open sets it).
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" SET timezone TO 'America/New_York'"); err != nil {
		t.Fatalf("testdb: time zone of %s: %v", name, err)
	}
	u, err := url.Parse(AdminURL())
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	u.Path = "/" + name
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	dbURL := u.String()

	db, err := store.Open(ctx, dbURL, 8)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	t.Cleanup(func() {
		_ = db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := store.Open(ctx, AdminURL(), 1)
		if err != nil {
			t.Logf("testdb: drop %s: %v", name, err)
			return
		}
		defer admin.Close()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("testdb: drop %s: %v", name, err)
		}
	})
	// Migrations the template lacks (none, unless one was added while
	// the template was cloned) are applied here.
	if _, err := store.Migrate(ctx, db); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	return db, dbURL
}

// template returns the name of a database migrated to the current
// migrations, which test databases are cloned from (CREATE DATABASE …
// TEMPLATE): migrating once per schema instead of once per test. Its name
// carries the migrations' fingerprint, so a changed migration builds a
// new one.
func template(ctx context.Context, admin *bun.DB) (string, error) {
	fp, err := migrations.Fingerprint()
	if err != nil {
		return "", err
	}
	return ensure(ctx, admin, "cl_template_"+fp[:16], "", func(db *bun.DB) error {
		_, err := store.Migrate(ctx, db)
		return err
	})
}

// derived returns the name of a copy of the template base that build
// filled, built once per key and test binary: what build writes depends on
// the code under test (the indexer, the adapters), so a copy built by other
// code is never used. Copies built by other binaries more than a day ago
// are dropped.
func derived(ctx context.Context, admin *bun.DB, base, key string, build func(db *bun.DB)) (string, error) {
	exe, err := binaryHash()
	if err != nil {
		return "", err
	}
	k := unsafeChars.ReplaceAllString(strings.ToLower(key), "_")
	name := base + "_" + k + "_" + exe
	if len(name) > 63 {
		return "", fmt.Errorf("template key %q is too long", key)
	}
	name, err = ensure(ctx, admin, name, base, func(db *bun.DB) error {
		build(db)
		return nil
	})
	if err != nil {
		return "", err
	}
	// Stamped when first used here (an existing copy keeps its stamp), so
	// a copy is old when no binary has built it for a day.
	_, _ = admin.ExecContext(ctx, "COMMENT ON DATABASE "+name+" IS '"+strconv.FormatInt(time.Now().Unix(), 10)+"'")
	var stale []string
	_ = admin.NewRaw(`SELECT d.datname FROM pg_database d JOIN pg_shdescription c ON c.objoid = d.oid AND c.classoid = 'pg_database'::regclass
		WHERE d.datname LIKE ? AND d.datname <> ? AND c.description ~ '^[0-9]+$' AND c.description::bigint < ?`,
		strings.ReplaceAll(base+"_"+k+"_", "_", "\\_")+"%", name, time.Now().Add(-24*time.Hour).Unix()).Scan(ctx, &stale)
	for _, d := range stale {
		_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+d+" WITH (FORCE)")
	}
	return name, nil
}

// binaryHash names the running test binary by its content (8 hex digits).
func binaryHash() (string, error) {
	path, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("test binary: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("test binary: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("test binary: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:8], nil
}

// ensure returns name, a database that fill built (from the template
// from, or empty), building it first when it does not exist. Test
// processes running at once build it once: they take turns on an
// advisory lock while they look for it. It is built under another name and
// renamed when complete, so a process killed while building leaves no
// half-built database behind.
func ensure(ctx context.Context, admin *bun.DB, name, from string, fill func(db *bun.DB) error) (string, error) {
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	defer conn.Close()
	lock := "chainlens testdb " + name
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext(?))", lock); err != nil {
		return "", fmt.Errorf("template %s: lock: %w", name, err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext(?))", lock)
	}()
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = ?", name).Scan(&n); err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	if n == 1 {
		return name, nil
	}
	building := name + "_building"
	create := "CREATE DATABASE " + building
	if from != "" {
		create += " TEMPLATE " + from
	}
	for _, q := range []string{"DROP DATABASE IF EXISTS " + building + " WITH (FORCE)", create} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return "", fmt.Errorf("template %s: %s: %w", name, q, err)
		}
	}
	u, err := url.Parse(AdminURL())
	if err != nil {
		return "", err
	}
	u.Path = "/" + building
	db, err := store.Open(ctx, u.String(), 8)
	if err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	err = fill(db)
	db.Close()
	if err != nil {
		return "", fmt.Errorf("template %s: %w", name, err)
	}
	// Whatever the build left connected (it should leave nothing) goes.
	for _, q := range []string{
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + building + "' AND pid <> pg_backend_pid()",
		"ALTER DATABASE " + building + " RENAME TO " + name,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return "", fmt.Errorf("template %s: %w", name, err)
		}
	}
	if from == "" {
		// Templates of earlier migrations (and what was built from them)
		// are no longer needed.
		var old []string
		prefix := name[:len("cl_template_")]
		rows, err := conn.QueryContext(ctx, "SELECT datname FROM pg_database WHERE datname LIKE ? AND datname NOT LIKE ?",
			strings.ReplaceAll(prefix, "_", "\\_")+"%", strings.ReplaceAll(name, "_", "\\_")+"%")
		if err == nil {
			for rows.Next() {
				var d string
				if rows.Scan(&d) == nil {
					old = append(old, d)
				}
			}
			rows.Close()
		}
		for _, d := range old {
			_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+d+" WITH (FORCE)")
		}
	}
	return name, nil
}
