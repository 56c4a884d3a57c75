package osmosis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chainlens/chainlens/chains"
)

// No recording in testdata holds an order-book event (the osmosis mainnet
// files predate the order book; the localnets have none), so these events
// are written from the attribute lists documented in chain-events.md §5.6
// (osmosis-labs/orderbook sumtree-orderbook): the keys and their order are
// the documented ones, the values are made up and marked as such.
const (
	obContract = "osmo1orderbookcontractxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" // made up
	obOwner    = "osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh"
)

func wasmEvent(typ string, idx int, kv ...string) chains.Event {
	ev := chains.Event{Type: typ, Index: idx, TxIndex: 0, MsgIndex: 0, Attrs: []chains.Attr{{Key: "_contract_address", Value: obContract}}}
	for i := 0; i+1 < len(kv); i += 2 {
		ev.Attrs = append(ev.Attrs, chains.Attr{Key: kv[i], Value: kv[i+1]})
	}
	return ev
}

// documentedEvents: a bid placed at tick -1500000 (placeLimit), a partial
// claim then the final claim of it (wasm-limitClaimed), an ask placed and
// cancelled (cancelLimit), and a cw20 transfer (not an order-book event).
func documentedEvents() []chains.Event {
	return []chains.Event{
		wasmEvent("wasm", 0, "method", "placeLimit", "owner", obOwner, "tick_id", "-1500000", "order_id", "7",
			"order_direction", "bid", "quantity", "1000000", "order_denom", "uusdc", "output_denom", "uosmo"),
		wasmEvent("wasm", 1, "method", "claimLimit"),
		wasmEvent("wasm-limitClaimed", 2, "sender", obOwner, "tick_id", "-1500000", "order_id", "7", "quantity_remaining", "400000",
			"owner", obOwner, "order_direction", "bid", "amount_claimed", "705882", "placed_quantity", "1000000",
			"fully_claimed", "false", "order_denom", "uusdc", "output_denom", "uosmo"),
		wasmEvent("wasm-limitClaimed", 3, "sender", "osmo1claimbot", "tick_id", "-1500000", "order_id", "7", "quantity_remaining", "0",
			"owner", obOwner, "order_direction", "bid", "amount_claimed", "470588", "placed_quantity", "1000000",
			"fully_claimed", "true", "order_denom", "uusdc", "output_denom", "uosmo"),
		wasmEvent("wasm", 4, "method", "placeLimit", "owner", obOwner, "tick_id", "2000000", "order_id", "8",
			"order_direction", "ask", "quantity", "250000", "order_denom", "uosmo", "output_denom", "uusdc"),
		wasmEvent("wasm", 5, "method", "cancelLimit", "owner", obOwner, "tick_id", "2000000", "order_id", "8",
			"quantity", "250000", "order_direction", "ask", "initial_quantity", "250000", "order_denom", "uosmo"),
		wasmEvent("wasm", 6, "action", "transfer", "from", obOwner, "to", "osmo1x", "amount", "12345"),
	}
}

func TestOrderbookRowsFromDocumentedEvents(t *testing.T) {
	b := &chains.Block{ChainID: "osmosis-1", Height: 100, Txs: []chains.Tx{{Index: 0, Events: documentedEvents()}}}
	out := chains.NewRows()
	if err := dexRows(b, out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.Of(orderbookTable.Name) {
		got = append(got, strings.TrimSpace(fmt.Sprintln(r[5:]...)))
	}
	want := []string{
		obContract + " place " + obOwner + " -1500000 7 bid 1000000 0 uusdc uosmo false",
		obContract + " claim " + obOwner + " -1500000 7 bid 1000000 705882 uusdc uosmo false",
		obContract + " claim " + obOwner + " -1500000 7 bid 1000000 470588 uusdc uosmo true",
		obContract + " place " + obOwner + " 2000000 8 ask 250000 0 uosmo uusdc false",
		obContract + " cancel " + obOwner + " 2000000 8 ask 250000 0 uosmo  false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A failed tx's events are not decoded.
	failed := &chains.Block{ChainID: "osmosis-1", Height: 100, Txs: []chains.Tx{{Index: 0, Code: 5, Events: documentedEvents()}}}
	out = chains.NewRows()
	if err := dexRows(failed, out); err != nil || len(out.Of(orderbookTable.Name)) != 0 {
		t.Errorf("failed tx: %d rows, %v", len(out.Of(orderbookTable.Name)), err)
	}
}

func TestOrderbookRowErrors(t *testing.T) {
	base := documentedEvents()[0]
	set := func(key, value string) chains.Event {
		ev := base
		ev.Attrs = append([]chains.Attr(nil), base.Attrs...)
		for i := range ev.Attrs {
			if ev.Attrs[i].Key == key {
				ev.Attrs[i].Value = value
			}
		}
		return ev
	}
	for name, c := range map[string]struct {
		ev   chains.Event
		want string
	}{
		"tick":      {set("tick_id", "x"), `tick_id "x"`},
		"order id":  {set("order_id", ""), `order_id ""`},
		"direction": {set("order_direction", "sell"), `order_direction "sell"`},
		"quantity":  {set("quantity", "-5"), `quantity "-5"`},
		"contract":  {set("_contract_address", ""), "_contract_address"},
		"claimed flag": {wasmEvent("wasm-limitClaimed", 0, "tick_id", "1", "order_id", "1", "order_direction", "ask",
			"placed_quantity", "1", "amount_claimed", "1", "fully_claimed", "maybe"), `fully_claimed "maybe"`},
	} {
		t.Run(name, func(t *testing.T) {
			err := orderbookRow(&chains.Block{ChainID: "osmosis-1", Height: 1}, &c.ev, chains.NewRows())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestForeignOrderbookNamesAreSkipped: any contract may emit a wasm event
// with method placeLimit, or a wasm-limitClaimed: one whose attributes are
// not an order book's is skipped and counted, the height is not failed.
func TestForeignOrderbookNamesAreSkipped(t *testing.T) {
	evs := append(documentedEvents(),
		wasmEvent("wasm", 7, "method", "placeLimit", "tick_id", "not-a-tick"),
		wasmEvent("wasm-limitClaimed", 8, "order_direction", "sideways"))
	b := &chains.Block{ChainID: "osmosis-1", Height: 100, Txs: []chains.Tx{{Index: 0, Events: evs}}}
	out := chains.NewRows()
	if err := dexRows(b, out); err != nil {
		t.Fatalf("a foreign contract's events failed the height: %v", err)
	}
	if n := len(out.Of(orderbookTable.Name)); n != 5 || b.Stats.ForeignEvents != 2 {
		t.Errorf("%d order-book rows, %d foreign events; want 5 and 2", n, b.Stats.ForeignEvents)
	}
}
