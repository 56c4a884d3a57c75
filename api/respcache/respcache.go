// Package respcache keeps encoded analytics answers in memory. Report
// tables change only when the indexer or an aggregator job commits, and
// the database announces each such commit (Feed): an answer is kept until
// a change of its chains or of the report tables is announced, for at most
// ttl; while announcements are not being received, for at most
// UnannouncedTTL. For stale more after that an answer is still sent while
// one background request recomputes it (stale-while-revalidate): a URL
// asked often is always answered from memory, at most one computation
// behind the data.
package respcache

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Feed reports announced data changes (store.Changes): Seq before a read,
// ChangedSince after it; meaningful only while Listening. SeqReplayed is
// the sequence a read on a streaming replica that had replayed the
// primary's WAL up to lsn shows.
type Feed interface {
	Seq() int64
	Listening() bool
	ChangedSince(seq int64, chains []string) bool
	SeqReplayed(lsn int64) int64
}

// Entry is an answer ready to send.
type Entry struct {
	Body    []byte
	Gzipped []byte      // nil when the body is too small to be worth compressing
	ETag    string      // quoted
	Header  http.Header // Content-Type, Cache-Control, ETag, freshness
	// Length and GzippedLength are the Content-Length values of Body and
	// Gzipped, rendered once.
	Length, GzippedLength []string
	Chains                []string // the chains the answer was computed from
	// computed is when the computation started, seq the change sequence
	// then (see Put).
	computed time.Time
	seq      int64
	// Refreshing is set while a background request recomputes this stale
	// answer, so only one does.
	Refreshing atomic.Bool
}

// State is what the cache holds for a key at a given time.
type State int

// The states of a lookup.
const (
	Miss  State = iota // nothing usable: compute before answering
	Fresh              // send it
	Stale              // outdated but within stale: send it and recompute
)

// UnannouncedTTL is the longest an answer is kept while data changes are
// not being announced.
const UnannouncedTTL = time.Second

// MaxEntries bounds the cache; it is emptied when full.
const MaxEntries = 10_000

// Cache is the response cache. The zero ttl disables it.
type Cache struct {
	ttl, stale time.Duration
	feed       Feed // nil: answers are kept for min(ttl, UnannouncedTTL)
	mu         sync.Mutex
	m          map[string]*Entry
	// canon remembers the canonical form of each raw query seen (at most
	// MaxEntries, counted by canonN), so a hit does not parse its query.
	canon  sync.Map // raw query → canonical query
	canonN atomic.Int64
}

// New returns a cache keeping answers for ttl, sent stale for stale more.
func New(ttl, stale time.Duration, feed Feed) *Cache {
	return &Cache{ttl: ttl, stale: stale, feed: feed, m: map[string]*Entry{}}
}

// Key identifies an analytics request: operation, path and the query with
// its parameters in a canonical order (the canonical form of a raw query
// seen before is remembered).
func (c *Cache) Key(operationID string, r *http.Request) string {
	raw := r.URL.RawQuery
	if raw == "" {
		return operationID + "|" + r.URL.Path + "?"
	}
	if q, ok := c.canon.Load(raw); ok {
		return operationID + "|" + r.URL.Path + "?" + q.(string)
	}
	q := r.URL.Query().Encode()
	if c.canonN.Add(1) > MaxEntries {
		c.canon.Clear()
		c.canonN.Store(0)
	}
	c.canon.Store(raw, q)
	return operationID + "|" + r.URL.Path + "?" + q
}

// Enabled reports whether answers are kept at all (cache_ttl > 0).
func (c *Cache) Enabled() bool { return c != nil && c.ttl > 0 }

// Seq is the change sequence to record with an answer about to be computed.
func (c *Cache) Seq() int64 {
	if c.feed == nil {
		return 0
	}
	return c.feed.Seq()
}

// SeqReplayed lowers seq (Seq before a computation) to what a snapshot
// begun on a replica that had replayed the primary's WAL up to lsn shows:
// an answer read there is outdated by every announcement it may not have
// replayed yet, and is recomputed at the next request once it has.
func (c *Cache) SeqReplayed(seq, lsn int64) int64 {
	if c.feed == nil {
		return seq
	}
	return min(seq, c.feed.SeqReplayed(lsn))
}

// Get returns the answer kept for key and whether it is fresh or stale.
func (c *Cache) Get(key string, now time.Time) (*Entry, State) {
	if !c.Enabled() {
		return nil, Miss
	}
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if !ok {
		return nil, Miss
	}
	ttl := c.ttl
	listening := c.feed != nil && c.feed.Listening()
	if !listening {
		ttl = min(ttl, UnannouncedTTL)
	}
	age := now.Sub(e.computed)
	switch {
	case age < ttl && !(listening && c.feed.ChangedSince(e.seq, e.Chains)):
		return e, Fresh
	case c.stale > 0 && age < ttl+c.stale:
		// Outdated (expired, or its data announced changed): still sent
		// while it is recomputed, within stale of its expiry.
		return e, Stale
	}
	return nil, Miss
}

// Put keeps e, computed from data read from started on, after change
// sequence seq (Seq before the computation).
func (c *Cache) Put(key string, e *Entry, started time.Time, seq int64) {
	if !c.Enabled() {
		return
	}
	e.computed, e.seq = started, seq
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= MaxEntries {
		clear(c.m)
	}
	c.m[key] = e
}
