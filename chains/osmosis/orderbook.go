package osmosis

import (
	"fmt"
	"strconv"
	"strings"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/chains"
)

// orderbookTable holds the limit-order events of the CosmWasm order book
// (chain-events.md §5.6, osmosis-labs/orderbook sumtree-orderbook): one row
// per placeLimit, cancelLimit and limitClaimed event of a successful tx.
var orderbookTable = chains.Table{Name: "osmosis_orderbook_events", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "msg_index", "contract", "kind", "owner", "tick_id", "order_id",
	"order_direction", "quantity", "amount_claimed", "order_denom", "output_denom", "fully_claimed",
}}

// Order-book event kinds.
const (
	OrderPlace  = "place"
	OrderCancel = "cancel"
	OrderClaim  = "claim"
)

// orderbookRow decodes one order-book event, if ev is one:
//   - wasm{method=placeLimit, owner, tick_id, order_id, order_direction,
//     quantity, order_denom, output_denom};
//   - wasm{method=cancelLimit, owner, tick_id, order_id, quantity (left,
//     refunded), order_direction, initial_quantity, order_denom};
//   - wasm-limitClaimed{sender, tick_id, order_id, quantity_remaining,
//     owner, order_direction, amount_claimed, placed_quantity,
//     fully_claimed, order_denom, output_denom}.
//
// quantity is the placed quantity (initial_quantity of a cancel,
// placed_quantity of a claim); amount_claimed is what a claim paid out
// (0 otherwise). Other wasm events are not order-book events.
func orderbookRow(b *chains.Block, ev *chains.Event, out *chains.Rows) error {
	var kind string
	switch ev.Type {
	case "wasm":
		switch m, _ := ev.Get("method"); m {
		case "placeLimit":
			kind = OrderPlace
		case "cancelLimit":
			kind = OrderCancel
		default:
			return nil
		}
	case "wasm-limitClaimed":
		kind = OrderClaim
	default:
		return nil
	}
	bad := func(key, v string, err error) error {
		return fmt.Errorf("%s event %d of tx %d: %s %q: %w", ev.Type, ev.Index, ev.TxIndex, key, v, err)
	}
	get := func(key string) string { v, _ := ev.Get(key); return v }
	integer := func(key string) (int64, error) {
		v := get(key)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, bad(key, v, err)
		}
		return n, nil
	}
	amount := func(key string) (string, error) {
		v := get(key)
		if _, ok := math.NewIntFromString(v); !ok || strings.HasPrefix(v, "-") {
			return "", bad(key, v, fmt.Errorf("not a non-negative integer"))
		}
		return v, nil
	}
	tick, err := integer("tick_id")
	if err != nil {
		return err
	}
	orderID, err := integer("order_id")
	if err != nil {
		return err
	}
	dir := strings.ToLower(get("order_direction"))
	if dir != "bid" && dir != "ask" {
		return bad("order_direction", get("order_direction"), fmt.Errorf("want bid or ask"))
	}
	qtyKey := map[string]string{OrderPlace: "quantity", OrderCancel: "initial_quantity", OrderClaim: "placed_quantity"}[kind]
	qty, err := amount(qtyKey)
	if err != nil {
		return err
	}
	claimed, fully := "0", false
	if kind == OrderClaim {
		if claimed, err = amount("amount_claimed"); err != nil {
			return err
		}
		v := get("fully_claimed")
		if fully, err = strconv.ParseBool(v); err != nil {
			return bad("fully_claimed", v, err)
		}
	}
	contract := get("_contract_address")
	if contract == "" {
		return bad("_contract_address", "", fmt.Errorf("missing"))
	}
	out.Add(orderbookTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, ev.MsgIndex, contract, kind, get("owner"), tick, orderID,
		dir, qty, claimed, get("order_denom"), get("output_denom"), fully)
	return nil
}
