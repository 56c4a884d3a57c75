package dydx_test

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/chainlens/chainlens/internal/dydxtest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestRecordedLocalnetFills indexes the recorded dYdX localnet through the
// real pipeline and checks dydx_fills against the node's own record of
// every fill (dydxtest.Fills: 135 fills, liquidations among them).
func TestRecordedLocalnetFills(t *testing.T) {
	want := dydxtest.Fills(t)
	liquidations := 0
	for _, s := range want {
		if s.Liq {
			liquidations++
		}
	}
	if len(want) != 270 || liquidations == 0 {
		t.Fatalf("truth has %d fill sides, %d liquidation sides: not the recording this test was written for", len(want), liquidations)
	}
	db, _ := testdb.New(t)
	dydxtest.Index(t, db)
	var got []dydxtest.Side
	if err := db.NewRaw(`SELECT height, role, address, size::text AS size, notional::text AS notional, is_liquidation FROM dydx_fills`).
		Scan(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	order := func(a, b dydxtest.Side) int {
		return cmp.Or(cmp.Compare(a.Height, b.Height), cmp.Compare(a.Role, b.Role), cmp.Compare(a.Address, b.Address),
			cmp.Compare(a.Size, b.Size), cmp.Compare(a.Notional, b.Notional))
	}
	slices.SortFunc(got, order)
	slices.SortFunc(want, order)
	if !slices.Equal(got, want) {
		t.Errorf("dydx_fills: %d rows, want %d", len(got), len(want))
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("first difference at %d:\n got %+v\nwant %+v", i, got[i], want[i])
			}
		}
	}
}
