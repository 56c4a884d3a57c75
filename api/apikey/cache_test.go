package apikey

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// clock is a settable time for the Authenticator.
type clock struct{ t atomic.Pointer[time.Time] }

func (c *clock) now() time.Time      { return *c.t.Load() }
func (c *clock) set(t time.Time)     { c.t.Store(&t) }
func (c *clock) add(d time.Duration) { c.set(c.now().Add(d)) }

func newAuth(t *testing.T) (*Authenticator, *bun.DB, *clock, string, string) {
	t.Helper()
	db, _ := testdb.New(t)
	ctx := context.Background()
	var raws []string
	for _, name := range []string{"a", "b"} {
		raw, _, err := Create(ctx, db, Spec{Name: name, Kind: Secret, Scopes: []string{ScopeAll}, QuotaCredits: 10, QuotaPeriod: time.Hour, RatePerSec: 1, RateBurst: 1})
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	c := &clock{}
	c.set(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	a := NewAuthenticator(db)
	a.now = c.now
	return a, db, c, raws[0], raws[1]
}

// TestOutageGrace: while the database cannot be reached, a key it confirmed
// within OutageGrace is still let in; one older, or never seen, is not (the
// error is the database's, which the API answers 503), and an unknown key
// stays unknown.
func TestOutageGrace(t *testing.T) {
	t.Parallel()
	a, _, c, known, unseen := newAuth(t)
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, known); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, "nope"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	gone := bun.NewDB(sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN("postgres://postgres@127.0.0.1:1/none?sslmode=disable"))), pgdialect.New())
	t.Cleanup(func() { _ = gone.Close() })
	a.mu.Lock()
	a.db = gone
	a.mu.Unlock()
	for _, step := range []struct {
		after   time.Duration
		raw     string
		outage  bool // the database's error
		unknown bool
	}{
		{2 * time.Second, known, false, false},
		{50 * time.Second, known, false, false},
		{2 * time.Second, "nope", true, false}, // its "unknown" expired too: not let in
		{2 * time.Second, unseen, true, false},
		{10 * time.Second, known, true, false}, // 62 s after the last confirmation
	} {
		c.add(step.after)
		k, err := a.Authenticate(ctx, step.raw)
		switch {
		case step.outage && (err == nil || !store.Unavailable(err)):
			t.Errorf("+%v %s: %v, %v; want the database's error", step.after, step.raw, k, err)
		case !step.outage && (err != nil || k == nil || k.Name != "a"):
			t.Errorf("+%v %s: %v, %v; want key a", step.after, step.raw, k, err)
		}
	}
}

// TestRevocationWithinCacheTTL: a key in steady use is checked again in the
// background after half of CacheTTL, so a revocation takes effect within
// CacheTTL without any request waiting for the database.
func TestRevocationWithinCacheTTL(t *testing.T) {
	t.Parallel()
	a, db, c, raw, _ := newAuth(t)
	ctx := context.Background()
	done := make(chan struct{}, 10)
	a.refreshed = func() { done <- struct{}{} }
	if _, err := a.Authenticate(ctx, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := Revoke(ctx, db, "a"); err != nil {
		t.Fatal(err)
	}
	c.add(CacheTTL / 4)
	if _, err := a.Authenticate(ctx, raw); err != nil {
		t.Fatalf("within the first half of CacheTTL: %v", err)
	}
	select {
	case <-done:
		t.Fatal("a background check ran before half of CacheTTL")
	case <-time.After(50 * time.Millisecond):
	}
	c.add(CacheTTL / 2)
	if _, err := a.Authenticate(ctx, raw); err != nil {
		t.Fatalf("the request that starts the background check is answered from memory: %v", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no background check")
	}
	if _, err := a.Authenticate(ctx, raw); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("after the background check: %v, want ErrUnknownKey", err)
	}
}
