package indexer

import (
	"reflect"
	"testing"
)

func TestContiguousRuns(t *testing.T) {
	cases := []struct {
		in   []int64
		max  int
		want [][]int64
	}{
		{nil, 3, nil},
		{[]int64{5}, 3, [][]int64{{5}}},
		{[]int64{1, 2, 3, 4, 5}, 2, [][]int64{{1, 2}, {3, 4}, {5}}},
		{[]int64{1, 2, 7, 8, 9, 20}, 10, [][]int64{{1, 2}, {7, 8, 9}, {20}}},
	}
	for _, c := range cases {
		if got := contiguousRuns(c.in, c.max); !reflect.DeepEqual(got, c.want) {
			t.Errorf("contiguousRuns(%v, %d) = %v, want %v", c.in, c.max, got, c.want)
		}
	}
}
