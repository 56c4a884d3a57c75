package respcache

import (
	"net/http/httptest"
	"testing"
	"time"
)

// feed is a change feed whose announcements the test sets.
type feed struct {
	seq       int64
	listening bool
	changed   map[string]int64 // chain → sequence of its last change
}

func (f *feed) Seq() int64              { return f.seq }
func (f *feed) Listening() bool         { return f.listening }
func (f *feed) SeqReplayed(int64) int64 { return 0 }
func (f *feed) ChangedSince(seq int64, chains []string) bool {
	for _, c := range chains {
		if f.changed[c] > seq {
			return true
		}
	}
	return false
}

func TestGet(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name      string
		ttl       time.Duration
		stale     time.Duration
		listening bool
		changedAt int64 // sequence of a change of chain "a" (0: none)
		age       time.Duration
		want      State
	}{
		{"disabled", 0, 0, true, 0, 0, Miss},
		{"fresh while nothing changed", time.Minute, 0, true, 0, 30 * time.Second, Fresh},
		{"expired", time.Minute, 0, true, 0, 61 * time.Second, Miss},
		{"expired, sent stale", time.Minute, 10 * time.Second, true, 0, 65 * time.Second, Stale},
		{"past stale", time.Minute, 10 * time.Second, true, 0, 71 * time.Second, Miss},
		{"its chain changed", time.Minute, 0, true, 2, time.Second, Miss},
		{"its chain changed, sent stale", time.Minute, 10 * time.Second, true, 2, time.Second, Stale},
		{"a change before it was computed", time.Minute, 0, true, 1, time.Second, Fresh},
		{"not listening: kept a second", time.Minute, 0, false, 0, 900 * time.Millisecond, Fresh},
		{"not listening: gone after a second", time.Minute, 0, false, 0, 1100 * time.Millisecond, Miss},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &feed{seq: 1, listening: c.listening, changed: map[string]int64{"a": c.changedAt}}
			cache := New(c.ttl, c.stale, f)
			r := httptest.NewRequest("GET", "/x?b=2&a=1", nil)
			key := New(time.Minute, 0, nil).Key("GET /x", r)
			if key != "GET /x|/x?a=1&b=2" {
				t.Fatalf("key %q", key)
			}
			cache.Put(key, &Entry{Body: []byte("{}"), Chains: []string{"a"}}, t0, cache.Seq())
			f.seq = 2
			if _, got := cache.Get(key, t0.Add(c.age)); got != c.want {
				t.Fatalf("state %d, want %d", got, c.want)
			}
		})
	}
}

func TestFullCacheEmpties(t *testing.T) {
	cache := New(time.Minute, 0, nil)
	t0 := time.Now()
	for i := range MaxEntries + 1 {
		cache.Put(string(rune('a'+i%26))+time.Duration(i).String(), &Entry{}, t0, 0)
	}
	if n := len(cache.m); n != 1 {
		t.Fatalf("%d entries after overflowing, want 1", n)
	}
}

// TestKey: the cache key of a request is its operation, path and canonical
// query, whether the raw query was seen before (remembered) or not.
func TestKey(t *testing.T) {
	c := New(time.Minute, 0, nil)
	for _, round := range []string{"first", "remembered"} {
		for _, tc := range []struct{ target, want string }{
			{"/a", "GET /a|/a?"},
			{"/a?x=1&b=2", "GET /a|/a?b=2&x=1"},
			{"/a?b=2&x=1", "GET /a|/a?b=2&x=1"},
			{"/a?x=%20y", "GET /a|/a?x=+y"},
			{"/b?x=1&b=2", "GET /a|/b?b=2&x=1"},
		} {
			if got := c.Key("GET /a", httptest.NewRequest("GET", tc.target, nil)); got != tc.want {
				t.Errorf("%s %s: %q, want %q", round, tc.target, got, tc.want)
			}
		}
	}
}
