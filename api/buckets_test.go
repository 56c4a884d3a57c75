package api

import (
	"errors"
	"testing"
	"time"

	"github.com/chainlens/chainlens/api/problem"
)

func TestBuckets(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tip := ChainHeight{Time: at("2026-11-27 10:15:00"), First: at("2026-08-10 17:00:00")}
	cases := []struct {
		name, start, end, res string
		want                  []string
	}{
		{"a day range starting mid-day begins with the next day", "2026-11-24 10:30:00", "2026-11-26 23:59:59", Day,
			[]string{"2026-11-25 00:00:00", "2026-11-26 00:00:00"}},
		{"a day range starting at midnight keeps its first day", "2026-11-25 00:00:00", "2026-11-26 00:00:00", Day,
			[]string{"2026-11-25 00:00:00", "2026-11-26 00:00:00"}},
		{"stops at the tip's bucket", "2026-11-26 00:00:00", "2026-11-30 23:59:59", Day,
			[]string{"2026-11-26 00:00:00", "2026-11-27 00:00:00"}},
		{"hours", "2026-11-27 08:00:01", "2026-11-27 23:00:00", Hour,
			[]string{"2026-11-27 09:00:00", "2026-11-27 10:00:00"}},
		{"ISO weeks start on Monday", "2026-11-09 00:00:00", "2026-11-27 00:00:00", Week,
			[]string{"2026-11-09 00:00:00", "2026-11-16 00:00:00", "2026-11-23 00:00:00"}},
		{"months", "2026-09-01 00:00:00", "2026-12-31 00:00:00", Month,
			[]string{"2026-09-01 00:00:00", "2026-10-01 00:00:00", "2026-11-01 00:00:00"}},
		{"a range within one bucket after its start holds none", "2026-11-25 01:00:00", "2026-11-25 23:00:00", Day, nil},
		{"starts with the bucket of the first indexed block", "2026-08-01 00:00:00", "2026-08-12 12:00:00", Day,
			[]string{"2026-08-10 00:00:00", "2026-08-11 00:00:00", "2026-08-12 00:00:00"}},
		{"a month holding the first block", "2026-01-01 00:00:00", "2026-09-30 00:00:00", Month,
			[]string{"2026-08-01 00:00:00", "2026-09-01 00:00:00"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Buckets(at(c.start), at(c.end), tip, c.res)
			if err != nil {
				t.Fatal(err)
			}
			var labels []string
			for _, b := range got {
				labels = append(labels, b.Format(time.DateTime))
			}
			if len(labels) != len(c.want) {
				t.Fatalf("got %v, want %v", labels, c.want)
			}
			for i := range labels {
				if labels[i] != c.want[i] {
					t.Fatalf("got %v, want %v", labels, c.want)
				}
			}
		})
	}
	if _, err := Buckets(at("2026-11-27 10:15:01"), at("2026-11-28 00:00:00"), tip, Day); !errors.Is(err, problem.ErrNotIndexed) {
		t.Errorf("a range after the tip: %v, want not indexed (503)", err)
	}
}
