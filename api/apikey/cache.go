package apikey

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/chainlens/chainlens/store"
	"github.com/uptrace/bun"
)

// CacheTTL bounds how long a key check is reused: a revocation made by any
// process takes effect within this time everywhere.
const CacheTTL = time.Second

// OutageGrace is how long a key the database confirmed stays usable while
// the database cannot be reached (a restart, a failover): answers that need
// no database (cached analytics) keep being served to known keys. An
// unknown key is never let in, and a revocation made during the outage
// takes effect when it ends.
const OutageGrace = time.Minute

// Authenticator checks raw keys against the database, remembering answers
// (including "unknown") for at most CacheTTL. A key in steady use is
// checked again in the background once half its time is up, so no request
// waits for the database on its behalf and the herd of requests that would
// find it expired together never forms.
type Authenticator struct {
	db  bun.IDB
	now func() time.Time
	// refreshed, when set (tests), is called after each background check.
	refreshed func()

	mu      sync.Mutex
	entries map[[32]byte]*cacheEntry
}

type cacheEntry struct {
	key      *Key // nil: unknown or revoked
	expires  time.Time
	verified time.Time // when the database last answered for it
	// refreshing is set while a background check runs (under mu).
	refreshing bool
}

// NewAuthenticator returns an Authenticator reading keys from db.
func NewAuthenticator(db bun.IDB) *Authenticator {
	return &Authenticator{db: db, now: time.Now, entries: map[[32]byte]*cacheEntry{}}
}

// Authenticate returns the live key for raw, or ErrUnknownKey.
func (a *Authenticator) Authenticate(ctx context.Context, raw string) (*Key, error) {
	var id [32]byte
	copy(id[:], Hash(raw))
	now := a.now()
	a.mu.Lock()
	e := a.entries[id]
	var fresh, refresh bool
	var key *Key
	if e != nil {
		key, fresh = e.key, now.Before(e.expires)
		if fresh && !e.refreshing && now.After(e.expires.Add(-CacheTTL/2)) {
			e.refreshing, refresh = true, true
		}
	}
	a.mu.Unlock()
	if refresh {
		go a.refresh(id, raw)
	}
	if fresh {
		if key == nil {
			return nil, ErrUnknownKey
		}
		return key, nil
	}
	k, err := lookup(ctx, a.db, raw)
	if err != nil && !errors.Is(err, ErrUnknownKey) {
		if store.Unavailable(err) && e != nil && key != nil && now.Sub(e.verified) < OutageGrace {
			return key, nil
		}
		return nil, err
	}
	a.store(id, k, now)
	if k == nil {
		return nil, ErrUnknownKey
	}
	return k, nil
}

// refresh checks raw again in the background; on failure the entry keeps
// its expiry and the next request after it asks the database itself.
func (a *Authenticator) refresh(id [32]byte, raw string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := a.now()
	k, err := lookup(ctx, a.db, raw)
	if err != nil && !errors.Is(err, ErrUnknownKey) {
		a.mu.Lock()
		if e := a.entries[id]; e != nil {
			e.refreshing = false
		}
		a.mu.Unlock()
	} else {
		a.store(id, k, start)
	}
	if a.refreshed != nil {
		a.refreshed()
	}
}

// store remembers the database's answer for id, read at checked.
func (a *Authenticator) store(id [32]byte, k *Key, checked time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.entries) > 100_000 { // bound memory against floods of random keys
		clear(a.entries)
	}
	a.entries[id] = &cacheEntry{key: k, expires: checked.Add(CacheTTL), verified: checked}
}

// OriginAllowed reports whether a live publishable key allows origin; CORS
// preflights, which carry no key, are answered with it. Answers are
// remembered for CacheTTL.
func (a *Authenticator) OriginAllowed(ctx context.Context, origin string) (bool, error) {
	id := sha256.Sum256([]byte("origin:" + origin))
	now := a.now()
	a.mu.Lock()
	e, ok := a.entries[id]
	a.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.key != nil, nil
	}
	var n int
	if err := a.db.NewRaw(`SELECT count(*) FROM api_keys WHERE kind = 'publishable' AND revoked_at IS NULL
		AND (? = ANY(origins) OR '*' = ANY(origins))`, origin).Scan(ctx, &n); err != nil {
		return false, fmt.Errorf("check origin: %w", err)
	}
	var marker *Key
	if n > 0 {
		marker = &Key{}
	}
	a.store(id, marker, now)
	return n > 0, nil
}
