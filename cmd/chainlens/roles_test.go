package main

import "testing"

func TestHeightRanges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   []int64
		want string
	}{
		{nil, ""},
		{[]int64{7}, "7"},
		{[]int64{7, 9, 10, 11, 12, 40}, "7, 9-12, 40"},
		{[]int64{1, 2, 3, 4, 5, 6, 7}, "1-7"},
		{[]int64{3, 5, 7, 9, 11, 13}, "3, 5, 7, 9, 11, 13"},
	}
	for _, c := range cases {
		if got := heightRanges(c.in); got != c.want {
			t.Errorf("heightRanges(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
