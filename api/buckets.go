package api

import (
	"fmt"
	"time"

	"github.com/chainlens/chainlens/api/problem"
)

// Bucket resolutions (shapes.md conventions: UTC hour, UTC day, ISO week
// starting Monday, calendar month).
const (
	Hour  = "hour"
	Day   = "day"
	Week  = "week"
	Month = "month"
)

// BucketStart returns the start of the bucket of resolution res that holds
// t; an unknown resolution is a day.
func BucketStart(t time.Time, res string) time.Time {
	t = t.UTC()
	switch res {
	case Hour:
		return t.Truncate(time.Hour)
	case Week:
		d := t.Truncate(24 * time.Hour)
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	default:
		return t.Truncate(24 * time.Hour)
	}
}

// NextBucket returns the start of the bucket after the one starting at b.
func NextBucket(b time.Time, res string) time.Time {
	switch res {
	case Hour:
		return b.Add(time.Hour)
	case Week:
		return b.AddDate(0, 0, 7)
	case Month:
		return b.AddDate(0, 1, 0)
	default:
		return b.AddDate(0, 0, 1)
	}
}

// Buckets lists the starts of the buckets of resolution res that belong to
// the range [start, end] (their start is in it: a range starting at 10:30
// begins with the next bucket), from the bucket of the chain's first
// indexed block (c.First, when known: nothing is known of the time before)
// up to the one of its last aggregated block (c.Time). A range starting
// after c.Time is not indexed yet (503).
func Buckets(start, end time.Time, c ChainHeight, res string) ([]time.Time, error) {
	tip := c.Time
	if start.After(tip) {
		return nil, fmt.Errorf("the reports reach %s, before start_date: %w", tip.UTC().Format(time.DateTime), problem.ErrNotIndexed)
	}
	last := end
	if tip.Before(last) {
		last = tip
	}
	b := BucketStart(start, res)
	if b.Before(start) {
		b = NextBucket(b, res)
	}
	if f := BucketStart(c.First, res); !c.First.IsZero() && f.After(b) {
		b = f
	}
	var out []time.Time
	for ; !b.After(last); b = NextBucket(b, res) {
		out = append(out, b)
	}
	return out, nil
}
