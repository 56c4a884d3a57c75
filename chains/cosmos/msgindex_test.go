package cosmos

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/chainlens/chainlens/chains"
)

// legacyMessages is a tx result's log before cosmos-sdk 0.50: the events of
// each message, grouped by type (attributes of one type concatenated).
func legacyMessages(t *testing.T, log string) [][]struct {
	Type       string            `json:"type"`
	Attributes []json.RawMessage `json:"attributes"`
} {
	t.Helper()
	var msgs []struct {
		Events []struct {
			Type       string            `json:"type"`
			Attributes []json.RawMessage `json:"attributes"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(log), &msgs); err != nil {
		t.Fatalf("log %.80q: %v", log, err)
	}
	out := make([][]struct {
		Type       string            `json:"type"`
		Attributes []json.RawMessage `json:"attributes"`
	}, len(msgs))
	for i, m := range msgs {
		out[i] = m.Events
	}
	return out
}

// TestInferMsgIndexFromLegacyResults numbers the events of the recorded
// Osmosis mainnet /block_results at 10,499,831 (CometBFT 0.34, cosmos-sdk
// before 0.50: no msg_index attribute) by message, and checks every tx
// against the node's own per-message log: each message's event types and
// attribute counts are exactly those of the events given its index.
func TestInferMsgIndexFromLegacyResults(t *testing.T) {
	res, _ := rpcFile(t, "osmosis/mainnet-block_results-10499831.json")
	r, err := parseResults(res, chains.AttrAuto)
	if err != nil {
		t.Fatal(err)
	}
	multi := 0
	for i, txr := range r.txs {
		log := legacyMessages(t, txr.log)
		tx := chains.Tx{Index: i, Code: txr.code, Events: txr.events, Messages: make([]chains.Message, len(log))}
		inferMsgIndex(&tx)
		if len(log) > 1 {
			multi++
		}
		got := map[string]int{}
		for _, ev := range tx.Events {
			if ev.MsgIndex >= 0 {
				got[fmt.Sprintf("%d %s", ev.MsgIndex, ev.Type)] += len(ev.Attrs)
			}
		}
		want := map[string]int{}
		for m, evs := range log {
			for _, ev := range evs {
				want[fmt.Sprintf("%d %s", m, ev.Type)] += len(ev.Attributes)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("tx %d: events by message\n got %v\nwant %v", i, got, want)
		}
	}
	if multi < 3 {
		t.Fatalf("%d txs with several messages: the recording no longer covers batches", multi)
	}

	// Every tx repeats its ante-handler events (fee transfer, tx) after its
	// messages' (cosmos-sdk#13983): the repeat is marked, and the fee moves
	// once in the bank rows.
	b := &chains.Block{ChainID: "osmosis-1", Height: 10499831}
	for i, txr := range r.txs {
		tx := chains.Tx{Index: i, Code: txr.code, Events: txr.events, Messages: make([]chains.Message, len(legacyMessages(t, txr.log)))}
		inferMsgIndex(&tx)
		ante, repeats := 0, 0
		for _, ev := range tx.Events {
			if ev.MsgIndex == -1 && !ev.Repeat {
				ante++
			}
			if ev.Repeat {
				repeats++
			}
		}
		if ante != 7 || repeats != ante {
			t.Errorf("tx %d: %d ante events, %d repeats; want 7 and 7", i, ante, repeats)
		}
		b.Txs = append(b.Txs, tx)
	}
	out := chains.NewRows()
	if err := bankRows(b, out); err != nil {
		t.Fatal(err)
	}
	feeRows := map[int]int{}
	for _, row := range out.Of(transfersTable.Name) {
		tx, ev := row[2].(int), row[3].(int)
		if b.Txs[tx].Events[ev].Repeat {
			t.Fatalf("a transfer row from a repeated ante event: %v", row)
		}
		if b.Txs[tx].Events[ev].MsgIndex == -1 {
			feeRows[tx]++
		}
	}
	for i := range b.Txs {
		if feeRows[i] != 1 {
			t.Errorf("tx %d: %d fee transfers, want 1", i, feeRows[i])
		}
	}

	// Without one opening event per message the layout is not the one
	// expected: nothing is numbered.
	odd := chains.Tx{Events: slices.Clone(r.txs[0].events), Messages: make([]chains.Message, 7)}
	for j := range odd.Events {
		odd.Events[j].MsgIndex = -1
	}
	inferMsgIndex(&odd)
	for _, ev := range odd.Events {
		if ev.MsgIndex != -1 {
			t.Fatalf("a tx of 7 messages whose events open fewer was numbered: %+v", ev)
		}
	}
}
