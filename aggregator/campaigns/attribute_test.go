package campaigns

import (
	"testing"
	"time"
)

func TestAttribute(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	x := exposures{7: {"a": {{at(-48 * time.Hour), false}, {at(-2 * time.Hour), true}, {at(-time.Hour), false}, {at(10 * time.Second), false}}}}
	cases := []struct {
		name          string
		campaign      int64
		addr          string
		t             time.Time
		window, skew  time.Duration
		ok            bool
		exposedAt     time.Time
		attributionIs string
	}{
		{"last exposure before, a click in the window", 7, "a", t0, 24 * time.Hour, 0, true, at(-time.Hour), "click"},
		{"window excludes the click", 7, "a", t0, 90 * time.Minute, 0, true, at(-time.Hour), "impression"},
		{"window excludes everything", 7, "a", t0, 30 * time.Minute, 0, false, time.Time{}, ""},
		{"an exposure just after the block time counts within the skew", 7, "a", t0, 30 * time.Minute, 30 * time.Second, true, at(10 * time.Second), "impression"},
		{"but not beyond it", 7, "a", t0, 30 * time.Minute, 5 * time.Second, false, time.Time{}, ""},
		{"action before any exposure", 7, "a", at(-72 * time.Hour), 24 * time.Hour, 0, false, time.Time{}, ""},
		{"first exposure exactly at t", 7, "a", at(-48 * time.Hour), time.Hour, 0, true, at(-48 * time.Hour), "impression"},
		{"window end is inclusive", 7, "a", at(-47 * time.Hour), time.Hour, 0, true, at(-48 * time.Hour), "impression"},
		{"other address", 7, "b", t0, 24 * time.Hour, 0, false, time.Time{}, ""},
		{"other campaign", 8, "a", t0, 24 * time.Hour, 0, false, time.Time{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, attr, ok := x.attribute(c.campaign, c.addr, c.t, c.window, c.skew)
			if ok != c.ok || (ok && (!e.Equal(c.exposedAt) || attr != c.attributionIs)) {
				t.Errorf("got %v %s %v, want %v %s %v", e, attr, ok, c.exposedAt, c.attributionIs, c.ok)
			}
		})
	}
}
