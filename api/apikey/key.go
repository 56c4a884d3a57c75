// Package apikey issues, stores and checks API keys, and meters their use:
// a token bucket per key and credits counted against a quota per period,
// kept in Postgres so that counts survive restarts and add up across API
// processes. Keys are stored only as a SHA-256 hash.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Kind tells secret keys (server side) from publishable keys (browsers).
type Kind string

// Key kinds and their prefixes.
const (
	Secret      Kind = "secret"      // sk_...
	Publishable Kind = "publishable" // pk_...
)

// ScopeAll grants every group; ScopeAdmin grants the admin API.
const (
	ScopeAll   = "all"
	ScopeAdmin = "admin"
)

// Key is a stored API key (without the key itself).
type Key struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID           int64        `bun:"id,pk,autoincrement"`
	Name         string       `bun:"name,notnull"`
	Kind         Kind         `bun:"kind,notnull"`
	Hint         string       `bun:"hint,notnull"`
	Hash         []byte       `bun:"hash,notnull"`
	Scopes       []string     `bun:"scopes,array,notnull"`
	Origins      []string     `bun:"origins,array,notnull"`
	QuotaCredits int64        `bun:"quota_credits,notnull"`
	QuotaPeriodS int64        `bun:"quota_period_s,notnull"` // seconds
	RatePerSec   float64      `bun:"rate_per_sec,notnull"`
	RateBurst    int          `bun:"rate_burst,notnull"`
	CreatedAt    time.Time    `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	RevokedAt    bun.NullTime `bun:"revoked_at"`
}

// QuotaPeriod is the length of the key's quota period.
func (k *Key) QuotaPeriod() time.Duration { return time.Duration(k.QuotaPeriodS) * time.Second }

// Allows reports whether the key's scopes cover the named scope.
func (k *Key) Allows(scope string) bool {
	return slices.Contains(k.Scopes, scope) || (scope != ScopeAdmin && slices.Contains(k.Scopes, ScopeAll))
}

// AllowsOrigin reports whether a publishable key may be used from origin.
func (k *Key) AllowsOrigin(origin string) bool {
	return slices.Contains(k.Origins, origin) || slices.Contains(k.Origins, "*")
}

// Spec describes a key to create.
type Spec struct {
	Name         string
	Kind         Kind
	Scopes       []string
	Origins      []string
	QuotaCredits int64
	QuotaPeriod  time.Duration
	RatePerSec   float64
	RateBurst    int
}

// ErrUnknownKey is returned for a key that does not exist or is revoked.
var ErrUnknownKey = errors.New("unknown or revoked API key")

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// generate returns a new random key of the kind: prefix plus 32 base62
// characters (190 bits of entropy).
func generate(kind Kind) (string, error) {
	prefix := "sk_"
	if kind == Publishable {
		prefix = "pk_"
	}
	var b strings.Builder
	b.WriteString(prefix)
	max := big.NewInt(int64(len(alphabet)))
	for range 32 {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("generate key: %w", err)
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	return b.String(), nil
}

// Hash is the stored form of a key.
func Hash(raw string) []byte {
	h := sha256.Sum256([]byte(raw))
	return h[:]
}

// Create stores a new key and returns the key itself, shown only once.
func Create(ctx context.Context, db bun.IDB, s Spec) (string, *Key, error) {
	if s.Name == "" {
		return "", nil, errors.New("create key: a name is required")
	}
	if len(s.Scopes) == 0 {
		return "", nil, errors.New("create key: at least one scope is required")
	}
	if s.Kind == Publishable && len(s.Origins) == 0 {
		return "", nil, errors.New("create key: a publishable key needs its allowed origins")
	}
	raw, err := generate(s.Kind)
	if err != nil {
		return "", nil, err
	}
	k := &Key{
		Name: s.Name, Kind: s.Kind, Hint: raw[:7], Hash: Hash(raw), Scopes: s.Scopes, Origins: s.Origins,
		QuotaCredits: s.QuotaCredits, QuotaPeriodS: int64(s.QuotaPeriod / time.Second), RatePerSec: s.RatePerSec, RateBurst: s.RateBurst,
	}
	if k.Origins == nil {
		k.Origins = []string{}
	}
	if _, err := db.NewInsert().Model(k).Returning("id, created_at").Exec(ctx); err != nil {
		return "", nil, fmt.Errorf("create key %q: %w", s.Name, err)
	}
	return raw, k, nil
}

// List returns every key, newest first.
func List(ctx context.Context, db bun.IDB) ([]Key, error) {
	var keys []Key
	if err := db.NewSelect().Model(&keys).Order("id DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return keys, nil
}

// Revoke revokes the key with the given id or name; it reports how many keys it revoked.
func Revoke(ctx context.Context, db bun.IDB, idOrName string) (int64, error) {
	q := db.NewUpdate().Model((*Key)(nil)).Set("revoked_at = now()").Where("revoked_at IS NULL")
	var id int64
	if _, err := fmt.Sscan(idOrName, &id); err == nil && fmt.Sprint(id) == idOrName {
		q = q.Where("id = ?", id)
	} else {
		q = q.Where("name = ?", idOrName)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("revoke key %q: %w", idOrName, err)
	}
	return res.RowsAffected()
}

// lookup loads a live key by its raw value.
func lookup(ctx context.Context, db bun.IDB, raw string) (*Key, error) {
	h := Hash(raw)
	k := new(Key)
	err := db.NewSelect().Model(k).Where("hash = ?", h).Where("revoked_at IS NULL").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrUnknownKey
	}
	if err != nil {
		return nil, fmt.Errorf("look up key: %w", err)
	}
	// The index lookup already matched the hash; compare in constant time
	// anyway so that the check does not depend on how the database compares.
	if subtle.ConstantTimeCompare(k.Hash, h) != 1 {
		return nil, ErrUnknownKey
	}
	return k, nil
}
