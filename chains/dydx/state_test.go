package dydx_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
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
	items := map[string][][]byte{
		dydx.PathAllPerpetuals: q.Perpetuals, dydx.PathAllMarketParams: q.MarketParams, dydx.PathAllMarketPrices: q.MarketPrices,
	}
	if err := a.StateRows(dydxtest.ChainID, dydxtest.LastHeight, items, state); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(filepath.Join(dydxtest.Dir(), "genesis.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(zr)
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
	}{{"dydx_perpetuals", 36}, {"dydx_markets", 38}} {
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

func TestStateRowsRejects(t *testing.T) {
	a := dydx.NewAdapter("dydx")
	for _, c := range []struct {
		name  string
		items map[string][][]byte
	}{
		{"a price without params", map[string][][]byte{dydx.PathAllMarketPrices: {dydxtest.MarketPrice(3, -9, 1)}}},
		{"a perpetual without a ticker", map[string][][]byte{dydx.PathAllPerpetuals: {dydxtest.Perpetual(1, "", 1, -9, 1)}}},
		{"a perpetual without params", map[string][][]byte{dydx.PathAllPerpetuals: {{0x10, 0x01}}}},
		{"truncated bytes", map[string][][]byte{dydx.PathAllMarketParams: {{0x12, 0x09, 'B'}}}},
		{"an id beyond uint32", map[string][][]byte{dydx.PathAllMarketParams: {dydxtest.MarketParam(1<<33, "X-USD")}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := a.StateRows("c", 1, c.items, chains.NewRows()); err == nil {
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
