package indexer

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Unknown messages are counted by type URL, at most maxUnknownTypes type
// URLs per chain: the rest count as "other", so a chain (or a spammer)
// that makes up type URLs cannot grow the series without bound.
func TestUnknownMessageTypesAreBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := m.Chain("a"), m.Chain("b")
	for i := range maxUnknownTypes + 5 {
		a.UnknownType(fmt.Sprintf("/spam.v1.Msg%d", i))
	}
	a.UnknownType("/spam.v1.Msg0")  // seen: its own series
	a.UnknownType("/spam.v1.Msg99") // new past the cap: other
	b.UnknownType("/other.v1.Msg")  // another chain has its own cap
	tests := []struct {
		chain, typeURL string
		want           float64
	}{
		{"a", "/spam.v1.Msg0", 2},
		{"a", fmt.Sprintf("/spam.v1.Msg%d", maxUnknownTypes-1), 1},
		{"a", "other", 6},
		{"b", "/other.v1.Msg", 1},
	}
	for _, tc := range tests {
		if got := testutil.ToFloat64(m.unknownTypes.WithLabelValues(tc.chain, tc.typeURL)); got != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.chain, tc.typeURL, got, tc.want)
		}
	}
	if n := testutil.CollectAndCount(m.unknownTypes); n != maxUnknownTypes+1+1 {
		t.Errorf("%d series, want %d", n, maxUnknownTypes+2)
	}
}
