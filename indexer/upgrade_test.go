package indexer_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/replaytest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// upgradeHeight is where the rewritten recording switches from the
// CometBFT 0.34 result format to 0.38's.
const upgradeHeight = 150

// to034 rewrites a CometBFT 0.38 /block_results result in the 0.34 form:
// base64 attribute keys and values, begin_block_events and
// end_block_events (by each event's mode) instead of
// finalize_block_events, no app_hash.
func to034(t *testing.T, result json.RawMessage) json.RawMessage {
	t.Helper()
	type attr struct {
		Key   string `json:"key"`
		Value string `json:"value"`
		Index bool   `json:"index"`
	}
	type event struct {
		Type       string `json:"type"`
		Attributes []attr `json:"attributes"`
	}
	var r struct {
		Height                string            `json:"height"`
		TxsResults            []json.RawMessage `json:"txs_results"`
		FinalizeBlockEvents   []event           `json:"finalize_block_events"`
		ValidatorUpdates      json.RawMessage   `json:"validator_updates"`
		ConsensusParamUpdates json.RawMessage   `json:"consensus_param_updates"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatal(err)
	}
	b64 := func(evs []event) []event {
		for i := range evs {
			for j := range evs[i].Attributes {
				a := &evs[i].Attributes[j]
				a.Key, a.Value = base64.StdEncoding.EncodeToString([]byte(a.Key)), base64.StdEncoding.EncodeToString([]byte(a.Value))
			}
		}
		return evs
	}
	var begin, end []event
	for _, ev := range r.FinalizeBlockEvents {
		mode := ""
		for _, a := range ev.Attributes {
			if a.Key == "mode" {
				mode = a.Value
			}
		}
		if mode == "EndBlock" {
			end = append(end, ev)
		} else {
			begin = append(begin, ev)
		}
	}
	txs := make([]json.RawMessage, len(r.TxsResults))
	for i, raw := range r.TxsResults {
		var tx map[string]json.RawMessage
		if err := json.Unmarshal(raw, &tx); err != nil {
			t.Fatal(err)
		}
		var evs []event
		if err := json.Unmarshal(tx["events"], &evs); err != nil {
			t.Fatal(err)
		}
		tx["events"], _ = json.Marshal(b64(evs))
		txs[i], _ = json.Marshal(tx)
	}
	out, err := json.Marshal(map[string]any{"height": r.Height, "txs_results": txs, "begin_block_events": b64(begin), "end_block_events": b64(end),
		"validator_updates": r.ValidatorUpdates, "consensus_param_updates": r.ConsensusParamUpdates})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A chain whose node upgraded CometBFT within the indexed range (results
// of heights below upgradeHeight in the 0.34 form: base64 attributes,
// begin and end block events; the rest in 0.38's) is indexed in one run to
// exactly the rows of the same chain recorded in one format.
func TestIndexAcrossAResultFormatChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := osmosistest.Dir()
	for _, f := range []string{"blocks.jsonl.gz", "status.json", "validators.json", "genesis.json.gz", "abci_info.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in, err := os.Open(filepath.Join(src, "block_results.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "block_results.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(out)
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for h := 1; sc.Scan(); h++ {
		var env map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &env); err != nil {
			t.Fatal(err)
		}
		if h < upgradeHeight {
			env["result"] = to034(t, env["result"])
		}
		line, _ := json.Marshal(env)
		fmt.Fprintf(zw, "%s\n", line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}

	want, _ := testdb.New(t)
	osmosistest.Index(t, want)
	got, _ := testdb.New(t)
	replaytest.Index(t, got, dir, osmosistest.Chain(""), osmosis.NewAdapter("osmo"), osmosistest.LastHeight)

	ctx := context.Background()
	for _, q := range []string{
		"SELECT count(*), coalesce(sum(num_txs), 0) FROM blocks",
		"SELECT count(*), coalesce(sum(gas_used), 0) FROM txs",
		"SELECT count(*), count(body) FROM messages",
		// Events by type, mode and message, attributes included (msg_index
		// aside: 0.34-era heights have it inferred, here it is recorded).
		"SELECT md5(string_agg(height || type || mode || attributes::text, ',' ORDER BY height, tx_index, event_index)) FROM events",
		"SELECT md5(string_agg(height || sender || recipient || denom || amount::text, ',' ORDER BY height, tx_index, sender, recipient, denom, amount)) FROM transfers",
		"SELECT md5(string_agg(height || address || denom || delta::text, ',' ORDER BY height, address, denom, delta)) FROM balance_changes",
		"SELECT count(*) FROM staking_events",
		"SELECT count(*) FROM osmosis_swaps",
	} {
		a, b := scalarRow(t, ctx, want, q), scalarRow(t, ctx, got, q)
		if a != b {
			t.Errorf("%s: %s across the format change, %s in one format", q, b, a)
		}
	}
}

// scalarRow returns the first row of a query as text.
func scalarRow(t *testing.T, ctx context.Context, db *bun.DB, q string) string {
	t.Helper()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		t.Fatalf("%s: no row", q)
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(vals...)
}
