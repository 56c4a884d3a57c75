// Package testdb gives each test its own fresh, migrated Postgres database
// on the real server (never a mock): CHAINLENS_TEST_DATABASE_URL, else
// DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres names the
// server and an administrative database used to create and drop test databases.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
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
	if _, err := store.Migrate(ctx, db); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	return db, dbURL
}
