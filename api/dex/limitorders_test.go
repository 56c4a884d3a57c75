package dex_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/osmosistest"
)

func wasmEv(typ string, idx, txIndex int, contract string, kv ...string) chains.Event {
	ev := chains.Event{Type: typ, Index: idx, TxIndex: txIndex, MsgIndex: 0, Attrs: []chains.Attr{{Key: "_contract_address", Value: contract}}}
	for i := 0; i+1 < len(kv); i += 2 {
		ev.Attrs = append(ev.Attrs, chains.Attr{Key: kv[i], Value: kv[i+1]})
	}
	return ev
}

// TestClosedLimitOrders indexes the recorded localnet: it has no order
// book (its two wasm events are a cw20 token's, and decode to no order
// rows), so every address has no closed order. Then, because no recording
// holds order-book events, it adds the events of chain-events.md §5.6's
// documented format (made-up values) to two real transactions of the
// localnet (heights 27 and 28) and checks the job and the endpoint on them.
func TestClosedLimitOrders(t *testing.T) {
	t.Parallel()
	db, ch := osmosistest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	ctx := context.Background()
	run := func() {
		t.Helper()
		sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	run()
	var n int
	if err := db.NewRaw("SELECT count(*) FROM osmosis_orderbook_events").Scan(ctx, &n); err != nil || n != 0 {
		t.Fatalf("%d order-book events on the localnet (%v), want 0", n, err)
	}
	const bob = "osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh"
	s := serveConfig(t, db, cfg, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))
	for path, want := range map[string]struct {
		status int
		body   string
	}{
		"/users/limit_orders/history/closed?address=" + bob:       {200, "[]"},
		"/users/limit_orders/history/closed?address=cosmos1xyz":   {400, "address"},
		"/users/limit_orders/history/closed":                      {400, "address"},
		"/users/limit_orders/history/closed?address=osmo1invalid": {400, "address"},
	} {
		resp, body := s.get(t, path)
		if resp.StatusCode != want.status || !strings.Contains(body, want.body) || want.status == 200 && body != want.body {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
		validateAgainstOpenAPI(t, s, path, resp, body)
	}

	// The documented events, on the cw20 transfer at height 27 (tx
	// 75ED1280…) and the cw20 mint at height 28 (tx AE26A48E…).
	type txRef struct {
		Height  int64 `bun:"height"`
		TxIndex int   `bun:"tx_index"`
	}
	var tx27, tx28 txRef
	for hash, ref := range map[string]*txRef{"75ED1280E0D117C3412FEB407904AFC6EE4D291DAC4A30AD4527B2A94B192C00": &tx27,
		"AE26A48EBE82FDBFFF8761EFE30F2D37E3810D2A22F03AE2DE6DE1C62AFF7B6C": &tx28} {
		if err := db.NewRaw("SELECT height, tx_index FROM txs WHERE hash = ?", hash).Scan(ctx, ref); err != nil {
			t.Fatal(err)
		}
	}
	const book = "osmo1orderbookcontractxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" // made up
	blocks := []*chains.Block{
		{ChainID: ch.ID, Height: tx27.Height, Txs: []chains.Tx{{Index: tx27.TxIndex, Events: []chains.Event{
			wasmEv("wasm", 100, tx27.TxIndex, book, "method", "placeLimit", "owner", bob, "tick_id", "-1500000", "order_id", "7",
				"order_direction", "bid", "quantity", "1000000", "order_denom", "uusdc", "output_denom", "uosmo"),
			wasmEv("wasm-limitClaimed", 101, tx27.TxIndex, book, "sender", bob, "tick_id", "-1500000", "order_id", "7",
				"quantity_remaining", "400000", "owner", bob, "order_direction", "bid", "amount_claimed", "705882",
				"placed_quantity", "1000000", "fully_claimed", "false", "order_denom", "uusdc", "output_denom", "uosmo"),
			wasmEv("wasm", 102, tx27.TxIndex, book, "method", "placeLimit", "owner", bob, "tick_id", "9000001", "order_id", "9",
				"order_direction", "ask", "quantity", "10", "order_denom", "uosmo", "output_denom", "uusdc"),
		}}}},
		{ChainID: ch.ID, Height: tx28.Height, Txs: []chains.Tx{{Index: tx28.TxIndex, Events: []chains.Event{
			wasmEv("wasm-limitClaimed", 100, tx28.TxIndex, book, "sender", "osmo1bot", "tick_id", "-1500000", "order_id", "7",
				"quantity_remaining", "0", "owner", bob, "order_direction", "bid", "amount_claimed", "470588",
				"placed_quantity", "1000000", "fully_claimed", "true", "order_denom", "uusdc", "output_denom", "uosmo"),
			wasmEv("wasm", 101, tx28.TxIndex, book, "method", "placeLimit", "owner", bob, "tick_id", "2000000", "order_id", "8",
				"order_direction", "ask", "quantity", "250000", "order_denom", "uosmo", "output_denom", "uusdc"),
			wasmEv("wasm", 102, tx28.TxIndex, book, "method", "cancelLimit", "owner", bob, "tick_id", "2000000", "order_id", "8",
				"quantity", "250000", "order_direction", "ask", "initial_quantity", "250000", "order_denom", "uosmo"),
		}}}},
	}
	a := osmosis.NewAdapter("osmo")
	for _, b := range blocks {
		out := chains.NewRows()
		if err := a.Rows(b, out); err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Of("osmosis_orderbook_events") {
			if _, err := db.ExecContext(ctx, `INSERT INTO osmosis_orderbook_events (chain_id, height, tx_index, event_index, msg_index, contract,
				kind, owner, tick_id, order_id, order_direction, quantity, amount_claimed, order_denom, output_denom, fully_claimed)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r...); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'dex_limit_orders'"); err != nil {
		t.Fatal(err)
	}
	run()
	// A rerun from watermark 0 writes the same rows.
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'dex_limit_orders'"); err != nil {
		t.Fatal(err)
	}
	run()
	var open []string
	if err := db.NewRaw("SELECT order_id || ' ' || status || ' ' || claimed_quantity FROM osmosis_limit_orders ORDER BY order_id").Scan(ctx, &open); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(open, ","); got != "7 fullyClaimed 1176470,8 cancelled 0,9 open 0" {
		t.Errorf("orders %s", got)
	}
	// Newest placement first: order 8 (height 28), then 7 (height 27);
	// order 9 is open. Times are the blocks' (blocks.jsonl.gz), hashes the txs'.
	var t27, t28 time.Time
	if err := db.NewRaw("SELECT (SELECT time FROM blocks WHERE chain_id = ?0 AND height = ?1), (SELECT time FROM blocks WHERE chain_id = ?0 AND height = ?2)",
		ch.ID, tx27.Height, tx28.Height).Scan(ctx, &t27, &t28); err != nil {
		t.Fatal(err)
	}
	want := `[{"place_timestamp":"` + t28.UTC().Format(time.DateTime) + `","place_tx_hash":"AE26A48EBE82FDBFFF8761EFE30F2D37E3810D2A22F03AE2DE6DE1C62AFF7B6C",` +
		`"order_denom":"uosmo","output_denom":"uusdc","quantity":"250000","claimed_quantity":"0","tick_id":"2000000","order_id":"8",` +
		`"order_direction":"ask","price":"3","status":"cancelled","contract":"` + book + `"},` +
		`{"place_timestamp":"` + t27.UTC().Format(time.DateTime) + `","place_tx_hash":"75ED1280E0D117C3412FEB407904AFC6EE4D291DAC4A30AD4527B2A94B192C00",` +
		`"order_denom":"uusdc","output_denom":"uosmo","quantity":"1000000","claimed_quantity":"1176470","tick_id":"-1500000","order_id":"7",` +
		`"order_direction":"bid","price":"0.85","status":"fullyClaimed","contract":"` + book + `"}]`
	path := "/users/limit_orders/history/closed?address=" + bob
	resp, body := s.get(t, path)
	if resp.StatusCode != 200 || body != want {
		t.Errorf("closed orders: %d\n%s\nwant\n%s", resp.StatusCode, body, want)
	}
	if resp.Header.Get("X-Data-Height") != "299" {
		t.Errorf("X-Data-Height %q", resp.Header.Get("X-Data-Height"))
	}
	validateAgainstOpenAPI(t, s, path, resp, body)
}
