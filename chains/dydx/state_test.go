package dydx_test

import (
	"io"
	"reflect"
	"slices"
	"testing"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/dydx"
	"github.com/chainlens/chainlens/internal/dydxtest"
)

// The catalog the node answered at height 520 (truth/, as protobuf) is the
// genesis catalog: the localnet listed no market while it ran. Two sources
// of the recording (the genesis file, the node's queries) must give the
// same rows.
func TestStateRowsEqualTheGenesisCatalog(t *testing.T) {
	q, err := dydxtest.NewCatalogQuerier()
	if err != nil {
		t.Fatal(err)
	}
	a := dydx.NewAdapter("dydx")
	state := chains.NewRows()
	items := q.Items()
	if err := a.StateRows(dydxtest.ChainID, dydxtest.LastHeight, items, state); err != nil {
		t.Fatal(err)
	}

	doc, err := io.ReadAll(dydxtest.Gunzip(t, "genesis.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := chains.ParseGenesis(doc)
	if err != nil {
		t.Fatal(err)
	}
	genesis := chains.NewRows()
	if err := a.GenesisRows(g, genesis); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		table string
		n     int
	}{{"dydx_perpetuals", 36}, {"dydx_markets", 38}, {"dydx_funding_params", 36}} {
		got := byID(state.Of(c.table))
		want := byID(genesis.Of(c.table)) // the genesis file lists EIGEN-USD and BOME-USD before TEST-USD
		if len(got) != c.n || len(want) != c.n {
			t.Fatalf("%s: %d rows from the state, %d from genesis, want %d", c.table, len(got), len(want), c.n)
		}
		for i := range got {
			if got[i][1] != int64(dydxtest.LastHeight) {
				t.Errorf("%s row %d: height %v", c.table, i, got[i][1])
			}
			g, w := append([]any{}, got[i]...), append([]any{}, want[i]...)
			g[1], w[1] = nil, nil // heights differ
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s row %d: state %v, genesis %v", c.table, i, got[i], want[i])
			}
		}
	}
	if first := state.Of("dydx_perpetuals")[0]; !reflect.DeepEqual(first, []any{"localdydxprotocol", int64(520), int64(0), "BTC-USD", int64(0), int64(-10), int64(1)}) {
		t.Errorf("BTC-USD: %v", first)
	}
}

// Each case spoils one answer of the recorded state.
func TestStateRowsRejects(t *testing.T) {
	a := dydx.NewAdapter("dydx")
	for _, c := range []struct {
		name string
		path string
		item [][]byte
	}{
		{"a price without params", dydx.PathAllMarketPrices, [][]byte{dydxtest.MarketPrice(3000, -9, 1)}},
		{"a perpetual without a ticker", dydx.PathAllPerpetuals, [][]byte{dydxtest.Perpetual(1, "", 1, -9, 0, 0, 1)}},
		{"a perpetual of an unknown liquidity tier", dydx.PathAllPerpetuals, [][]byte{dydxtest.Perpetual(1, "X-USD", 1, -9, 0, 77, 1)}},
		{"a perpetual without params", dydx.PathAllPerpetuals, [][]byte{{0x10, 0x01}}},
		{"truncated bytes", dydx.PathAllMarketParams, [][]byte{{0x12, 0x09, 'B'}}},
		{"an id beyond uint32", dydx.PathAllMarketParams, [][]byte{dydxtest.MarketParam(1<<33, "X-USD")}},
		{"no x/perpetuals params", dydx.PathPerpetualsParams, nil},
		{"no funding epochs", dydx.PathEpochInfoAll, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, err := dydxtest.NewCatalogQuerier()
			if err != nil {
				t.Fatal(err)
			}
			items := q.Items()
			if err := a.StateRows("c", 1, items, chains.NewRows()); err != nil {
				t.Fatalf("the recorded state: %v", err)
			}
			if c.item == nil {
				delete(items, c.path)
			} else {
				items[c.path] = append(items[c.path], c.item...)
			}
			if err := a.StateRows("c", 1, items, chains.NewRows()); err == nil {
				t.Error("accepted")
			}
		})
	}
}

// byID orders catalog rows by their id (the third column).
func byID(rows [][]any) [][]any {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b []any) int { return int(a[2].(int64) - b[2].(int64)) })
	return out
}
