package dydx_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	if err := db.NewRaw(`SELECT height, role, address, size::text AS size, notional::text AS notional, is_liquidation,
		is_buy, insurance_delta::text AS insurance_delta FROM dydx_fills`).
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

// TestFillDirectionBackfill clears is_buy and insurance_delta of the indexed
// fills, as rows written before migration 20261122000076 have them, and
// runs that migration's backfill from the match events: every row gets back
// what the adapter wrote.
func TestFillDirectionBackfill(t *testing.T) {
	db, _ := testdb.New(t)
	dydxtest.Index(t, db)
	ctx := context.Background()
	dump := func() string {
		var rows []string
		if err := db.NewRaw(`SELECT concat_ws(' ', height, tx_index, event_index, role, is_buy, insurance_delta) FROM dydx_fills ORDER BY 1`).
			Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		return strings.Join(rows, "\n")
	}
	want := dump()
	if _, err := db.ExecContext(ctx, "UPDATE dydx_fills SET is_buy = NULL, insurance_delta = NULL"); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "migrations", "20261122000076_perp_liquidations.up.sql"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(raw), "--bun:split")
	if len(parts) != 3 || !strings.Contains(parts[1], "UPDATE dydx_fills") {
		t.Fatalf("the migration's second part is not the backfill: %q", parts[1])
	}
	if _, err := db.ExecContext(ctx, parts[1]); err != nil {
		t.Fatal(err)
	}
	if got := dump(); got != want || !strings.Contains(got, "taker t ") || !strings.Contains(got, "taker f ") {
		t.Errorf("after the backfill:\n%s\nwant\n%s", got, want)
	}
}

// TestRecordedLocalnetPrices checks the oracle prices indexed from the
// genesis and every MsgUpdateMarketPrices against the node's prices at the
// last recorded height (truth/market_prices.json: price and exponent of
// every market), and the update count of the README (155 blocks with
// updates, 203 updates).
func TestRecordedLocalnetPrices(t *testing.T) {
	db, _ := testdb.New(t)
	dydxtest.Index(t, db)
	ctx := context.Background()
	prices := dydxtest.MarketPrices(t)
	ids := make([]int64, 0, len(prices))
	for id := range prices {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var want []string
	for _, id := range ids {
		want = append(want, fmt.Sprintf("%d %d %s", id, prices[id].Exponent, prices[id].Price))
	}
	var got []string
	if err := db.NewRaw(`SELECT concat_ws(' ', p.market_id, m.exponent, p.price) FROM (
			SELECT DISTINCT ON (market_id) market_id, price FROM dydx_prices ORDER BY market_id, height DESC) p
		JOIN dydx_markets m ON m.market_id = p.market_id ORDER BY p.market_id`).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("latest prices\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var blocks, updates int64
	if err := db.NewRaw("SELECT count(DISTINCT height), count(*) FROM dydx_prices WHERE height > 0").Scan(ctx, &blocks, &updates); err != nil {
		t.Fatal(err)
	}
	if blocks != 155 || updates != 23+20+89+30+21+20 {
		t.Errorf("%d blocks with %d price updates, want 155 with %d (README)", blocks, updates, 23+20+89+30+21+20)
	}
}

// TestRecordedLocalnetTransfers checks dydx_transfers against the seven
// subaccount transfers of the recording's action log (actions.md: height,
// tx, sender → recipient, amount; USDC has 6 decimals).
func TestRecordedLocalnetTransfers(t *testing.T) {
	db, _ := testdb.New(t)
	dydxtest.Index(t, db)
	const (
		alice = "dydx199tqg4wdlnu4qjlxchpd7seg454937hjrknju4"
		bob   = "dydx10fx7sy6ywd5senxae9dwytf8jxek3t2gcen2vs"
		carl  = "dydx1fjg6zp6vv8t9wvy4lps03r5l4g7tkjw9wvmh70"
		dave  = "dydx1wau5mja7j7zdavtfq9lu7ejef05hm6ffenlcsn"
	)
	want := []string{
		"5 3 deposit " + dave + " - " + dave + " 1 0 20000000000",
		"6 2 deposit " + carl + " - " + carl + " 1 0 1500000000",
		"6 3 withdraw " + bob + " 0 " + bob + " - 0 1000000000",
		"7 2 transfer " + alice + " 0 " + bob + " 2 0 2500000000",
		"305 2 transfer " + bob + " 2 " + alice + " 1 0 500000000",
		"306 2 withdraw " + dave + " 1 " + dave + " - 0 5000000000",
		"307 2 deposit " + alice + " - " + alice + " 0 0 100000000",
	}
	var got []string
	if err := db.NewRaw(`SELECT concat_ws(' ', height, tx_index, kind, sender, coalesce(sender_number::text, '-'), recipient,
			coalesce(recipient_number::text, '-'), asset_id, quantums) FROM dydx_transfers ORDER BY height, tx_index, event_index`).
		Scan(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("dydx_transfers\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
