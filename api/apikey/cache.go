package apikey

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// CacheTTL bounds how long a key check is reused: a revocation made by any
// process takes effect within this time everywhere.
const CacheTTL = time.Second

// Authenticator checks raw keys against the database, remembering answers
// (including "unknown") for at most CacheTTL.
type Authenticator struct {
	db  bun.IDB
	now func() time.Time

	mu      sync.Mutex
	entries map[[32]byte]cacheEntry
}

type cacheEntry struct {
	key     *Key // nil: unknown or revoked
	expires time.Time
}

// NewAuthenticator returns an Authenticator reading keys from db.
func NewAuthenticator(db bun.IDB) *Authenticator {
	return &Authenticator{db: db, now: time.Now, entries: map[[32]byte]cacheEntry{}}
}

// Authenticate returns the live key for raw, or ErrUnknownKey.
func (a *Authenticator) Authenticate(ctx context.Context, raw string) (*Key, error) {
	var id [32]byte
	copy(id[:], Hash(raw))
	now := a.now()
	a.mu.Lock()
	e, ok := a.entries[id]
	a.mu.Unlock()
	if ok && now.Before(e.expires) {
		if e.key == nil {
			return nil, ErrUnknownKey
		}
		return e.key, nil
	}
	k, err := lookup(ctx, a.db, raw)
	if err != nil && !errors.Is(err, ErrUnknownKey) {
		return nil, err
	}
	a.mu.Lock()
	if len(a.entries) > 100_000 { // bound memory against floods of random keys
		clear(a.entries)
	}
	a.entries[id] = cacheEntry{key: k, expires: now.Add(CacheTTL)}
	a.mu.Unlock()
	if k == nil {
		return nil, ErrUnknownKey
	}
	return k, nil
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
	a.mu.Lock()
	a.entries[id] = cacheEntry{key: marker, expires: now.Add(CacheTTL)}
	a.mu.Unlock()
	return n > 0, nil
}
