package cosmos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/chainlens/chainlens/chains"
)

// streamed decodes a height with decodeStream (block-level events in runs
// of run) and rebuilds the whole Block from its parts; rows gets the
// adapter's rows built part by part, as the indexer builds them.
func streamed(raw chains.RawBlock, opt Options, run int, a chains.Adapter, rows *chains.Rows) (*chains.Block, error) {
	var txs []chains.Tx
	var evs []chains.Event
	state := &chains.Part{}
	hdr, err := decodeStream(raw, bytes.NewReader(raw.Results), opt, func(p *chains.Block) error {
		if p.Part != nil {
			return errors.New("a part came with Part set")
		}
		txs = append(txs, p.Txs...)
		evs = append(evs, p.Events...)
		if a != nil {
			p.Part = state
			defer func() { p.Part = nil }()
			return a.Rows(p, rows)
		}
		return nil
	}, run)
	if err != nil {
		return nil, err
	}
	if hdr.Txs != nil || hdr.Events != nil {
		return nil, errors.New("the header Block holds txs or events")
	}
	if a != nil {
		hdr.Part = &chains.Part{Last: true, State: state.State}
		if err := a.Rows(hdr, rows); err != nil {
			return nil, err
		}
		hdr.Part = nil
	}
	b := *hdr
	b.Txs, b.Events = txs, evs
	return &b, nil
}

// rowSet renders rows as sorted text per table, for comparing row sets.
func rowSet(tables []chains.Table, rows *chains.Rows) map[string][]string {
	out := map[string][]string{}
	for _, t := range tables {
		var lines []string
		for _, r := range rows.Of(t.Name) {
			lines = append(lines, fmt.Sprintf("%#v", r))
		}
		sort.Strings(lines)
		out[t.Name] = lines
	}
	return out
}

// TestStreamDecodeMatchesDecodeBlock decodes every recorded localnet height
// whole and as a stream (block-level events one per part and in the
// default runs): the txs, events and stats, and the domain rows built part
// by part, must be exactly those of the whole decode.
func TestStreamDecodeMatchesDecodeBlock(t *testing.T) {
	totalRewards := 0
	defer func() {
		if totalRewards == 0 && !t.Failed() {
			t.Error("no block_rewards rows compared")
		}
	}()
	for _, w := range localnets {
		t.Run(w.name, func(t *testing.T) {
			ln := loadLocalnet(t, w.name, w.chainID, w.prefix)
			a := NewAdapter(w.name, w.prefix)
			opt := Options{Bech32Prefix: w.prefix, Registry: a.MessageDecoderAt(1)}
			rowsCompared, rewardRows := 0, 0
			for h := int64(1); h <= int64(len(ln.blocks)); h++ {
				raw := ln.raw(h)
				whole, err := DecodeBlock(raw, opt)
				if err != nil {
					t.Fatal(err)
				}
				wantRows := chains.NewRows()
				if err := a.Rows(whole, wantRows); err != nil {
					t.Fatal(err)
				}
				want := rowSet(a.Tables(), wantRows)
				for _, run := range []int{1, BlockEventRun} {
					gotRows := chains.NewRows()
					got, err := streamed(raw, opt, run, a, gotRows)
					if err != nil {
						t.Fatalf("height %d run %d: %v", h, run, err)
					}
					if !reflect.DeepEqual(got, whole) {
						t.Fatalf("height %d run %d: streamed block differs\n got %+v\nwant %+v", h, run, got, whole)
					}
					if g := rowSet(a.Tables(), gotRows); !reflect.DeepEqual(g, want) {
						for _, tb := range a.Tables() {
							if !reflect.DeepEqual(g[tb.Name], want[tb.Name]) {
								t.Errorf("height %d run %d: %s rows\n got %v\nwant %v", h, run, tb.Name, g[tb.Name], want[tb.Name])
							}
						}
						t.FailNow()
					}
				}
				rowsCompared += wantRows.Len()
				rewardRows += len(wantRows.Of(blockRewardsTable.Name))
			}
			if rowsCompared == 0 {
				t.Fatal("no domain rows compared")
			}
			totalRewards += rewardRows
			t.Logf("%d heights, %d domain rows identical (%d block rewards, summed over parts)", len(ln.blocks), rowsCompared, rewardRows)
		})
	}
}

// TestStreamDecodeRecordedResults streams the recorded single
// /block_results files of every format (0.34, 0.37, 0.38, comet 1.0, Sei,
// base64 and plain) with each attribute encoding.
func TestStreamDecodeRecordedResults(t *testing.T) {
	a := NewAdapter("cosmos", "cosmos")
	for _, w := range resultsFiles {
		t.Run(w.file, func(t *testing.T) {
			res, _ := rpcFile(t, w.file)
			var n struct {
				Txs []json.RawMessage `json:"txs_results"`
			}
			if err := json.Unmarshal(res, &n); err != nil {
				t.Fatal(err)
			}
			txs := make([][]byte, len(n.Txs))
			for i := range txs {
				txs[i] = []byte{byte(i)}
			}
			raw := chains.RawBlock{Height: w.height, Block: blockJSONFor(w.height, "", txs...), Results: res}
			for _, enc := range []chains.AttrEncoding{chains.AttrAuto, chains.AttrPlain, chains.AttrBase64} {
				opt := Options{Attrs: enc, Registry: registry()}
				whole, err := DecodeBlock(raw, opt)
				if err != nil {
					t.Fatal(err)
				}
				wantRows, gotRows := chains.NewRows(), chains.NewRows()
				if err := a.Rows(whole, wantRows); err != nil {
					// Attributes read with the wrong encoding: the rows fail either way.
					if _, serr := streamed(raw, opt, 7, a, gotRows); serr == nil {
						t.Fatalf("encoding %d: whole rows fail (%v) but streamed rows do not", enc, err)
					}
					continue
				}
				got, err := streamed(raw, opt, 7, a, gotRows)
				if err != nil {
					t.Fatalf("encoding %d: %v", enc, err)
				}
				if !reflect.DeepEqual(got, whole) {
					t.Fatalf("encoding %d: streamed block differs", enc)
				}
				if !reflect.DeepEqual(rowSet(a.Tables(), gotRows), rowSet(a.Tables(), wantRows)) {
					t.Fatalf("encoding %d: rows differ", enc)
				}
			}
		})
	}
}

// TestStreamDecodeTolerance streams the inputs of the decoder's tolerance
// and encoding tests.
func TestStreamDecodeTolerance(t *testing.T) {
	ev := func(keys ...string) string {
		var as []string
		for _, k := range keys {
			as = append(as, fmt.Sprintf(`{"key":%q,"value":"dmFs"}`, k))
		}
		return fmt.Sprintf(`{"type":"t","attributes":[%s]}`, strings.Join(as, ","))
	}
	tests := []struct {
		name    string
		txs     int
		results string
	}{
		{"null lists, opaque extras", 0, `{"height":"7","txs_results":null,"finalize_block_events":null,"validator_updates":[{"pub_key":{"Sum":{"type":"x"}},"power":"x"}],"consensus_param_updates":{"abci":{}},"app_hash":null,"total_gas_used":"0"}`},
		{"numbers, missing fields, null values", 2, `{"height":7,"txs_results":[{"code":32,"log":"bad","codespace":"sdk"},{"code":"0","gas_wanted":"-1","gas_used":12,"events":[{"attributes":[{"key":null,"value":null},{"key":"k","value":5}]}]}]}`},
		{"a null tx result", 1, `{"height":"7","txs_results":[null]}`},
		{"0.37 begin and end", 0, `{"height":"7","begin_block_events":[{"type":"a","attributes":[{"key":"mode","value":"x"}]},{"type":"b","attributes":[]}],"end_block_events":[{"type":"c","attributes":[{"key":"amount","value":"1u"}]}]}`},
		{"0.34 base64", 0, `{"height":"7","begin_block_events":[{"type":"a","attributes":[{"key":"YW1vdW50","value":null},{"key":"bXNnX2luZGV4","value":"Mw=="}]}],"end_block_events":[{"type":"b","attributes":[{"key":"bW9kZQ==","value":"RW5kQmxvY2s="}]}]}`},
		{"0.38 finalize modes", 0, `{"height":"7","finalize_block_events":[{"type":"x","attributes":[{"key":"mode","value":"custom"},{"key":"mode","value":"EndBlock"}]},{"type":"y","attributes":[{"key":"msg_index","value":"-2"}]}]}`},
		{"members in other order and case", 1, `{"Finalize_Block_Events":[` + ev("amount") + `],"app_hash":"","TXS_RESULTS":[{"events":[` + ev("sender") + `]}],"HEIGHT":"7"}`},
		{"begin, end and finalize in order", 0, `{"height":"7","begin_block_events":[` + ev("a") + `],"end_block_events":[` + ev("b") + `],"finalize_block_events":[` + ev("c") + `]}`},
		{"plain keys", 1, `{"height":"7","txs_results":[{"events":[` + ev("sender", "amount") + `]}]}`},
		{"base64 keys", 1, `{"height":"7","txs_results":[{"events":[` + ev("c2VuZGVy", "YW1vdW50") + `]}]}`},
		{"four-letter plain key", 1, `{"height":"7","txs_results":[{"events":[` + ev("mode") + `]}]}`},
		{"no keys", 1, `{"height":"7","txs_results":[{"events":[` + ev() + `]}]}`},
		{"only empty keys", 1, `{"height":"7","txs_results":[{"events":[` + ev("", "") + `]}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			txs := make([][]byte, tc.txs)
			for i := range txs {
				txs[i] = []byte("not a tx")
			}
			raw := chains.RawBlock{Height: 7, Block: blockJSONFor(7, "", txs...), Results: json.RawMessage(tc.results)}
			for _, enc := range []chains.AttrEncoding{chains.AttrAuto, chains.AttrPlain, chains.AttrBase64} {
				opt := Options{Attrs: enc, Registry: registry()}
				whole, err := DecodeBlock(raw, opt)
				if err != nil {
					t.Fatal(err)
				}
				got, err := streamed(raw, opt, 1, nil, nil)
				if err != nil {
					t.Fatalf("encoding %d: %v", enc, err)
				}
				if !reflect.DeepEqual(got, whole) {
					t.Fatalf("encoding %d:\n got %+v\nwant %+v", enc, got, whole)
				}
			}
		})
	}
}

// TestStreamDecodeLateEncoding covers responses whose attribute encoding
// the first keys do not settle: the stream asks for a restart with the
// final verdict, and decoding again with it gives DecodeBlock's result.
func TestStreamDecodeLateEncoding(t *testing.T) {
	tx := func(attrs string) string { return `{"events":[{"type":"t","attributes":[` + attrs + `]}]}` }
	tests := []struct {
		name    string
		results string
		restart chains.AttrEncoding
	}{
		{"base64 keys, then a plain one", `{"height":"7","txs_results":[` + tx(`{"key":"c2VuZGVy","value":"dmFs"}`) + `,` + tx(`{"key":"sender","value":"dmFs"}`) + `]}`, chains.AttrPlain},
		{"a value without key, then base64 keys", `{"height":"7","txs_results":[` + tx(`{"key":"","value":"dmFs"}`) + `,` + tx(`{"key":"c2VuZGVy","value":"dmFs"}`) + `]}`, chains.AttrBase64},
		{"base64 tx keys, then a plain block-level key", `{"height":"7","txs_results":[` + tx(`{"key":"c2VuZGVy","value":"dmFs"}`) + `,` + tx(`{"key":"YW1vdW50","value":"dmFs"}`) + `],"finalize_block_events":[{"type":"x","attributes":[{"key":"amount","value":"1u"}]}]}`, chains.AttrPlain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := chains.RawBlock{Height: 7, Block: blockJSONFor(7, "", []byte("a"), []byte("b")), Results: json.RawMessage(tc.results)}
			whole, err := DecodeBlock(raw, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = streamed(raw, Options{}, 1, nil, nil)
			var re *chains.RestartError
			if !errors.As(err, &re) || re.Attrs != tc.restart {
				t.Fatalf("err = %v, want a restart with encoding %d", err, tc.restart)
			}
			got, err := streamed(raw, Options{Attrs: re.Attrs}, 1, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, whole) {
				t.Fatalf("after restart:\n got %+v\nwant %+v", got, whole)
			}
		})
	}
}

func TestStreamDecodeErrors(t *testing.T) {
	ev := `{"type":"t","attributes":[{"key":"a","value":"b"}]}`
	tests := []struct {
		name    string
		txs     int
		results string
		is      error
		message string
	}{
		{"results height", 0, `{"height":"4"}`, ErrMismatch, "height 5: /block_results is for height 4"},
		{"no height", 0, `{"txs_results":null}`, ErrMismatch, "height 5: /block_results is for height 0"},
		{"more tx results", 1, `{"height":"5","txs_results":[{},{}]}`, ErrMismatch, "height 5: /block has 1 txs but /block_results has more"},
		{"fewer tx results", 2, `{"height":"5","txs_results":[{}]}`, ErrMismatch, "height 5: /block has 2 txs but /block_results has 1 txs_results"},
		{"txs_results not a list", 0, `{"height":"5","txs_results":{}}`, ErrMalformed, "height 5: /block_results: malformed response"},
		{"height not a number", 0, `{"height":"x5"}`, ErrMalformed, "height 5: /block_results: malformed response"},
		{"negative code", 1, `{"height":"5","txs_results":[{"code":-1}]}`, ErrMalformed, "height 5: /block_results: malformed response: tx result 0: code -1 out of range"},
		{"not an object", 0, `[]`, ErrMalformed, "height 5: /block_results: malformed response"},
		{"truncated", 1, `{"height":"5","txs_results":[{"code":0,"events":[` + ev, io.ErrUnexpectedEOF, "height 5: /block_results: malformed response"},
		{"truncated between members", 0, `{"height":"5",`, io.ErrUnexpectedEOF, "height 5: /block_results: malformed response"},
		{"empty", 0, ``, io.ErrUnexpectedEOF, "height 5: /block_results: malformed response"},
		{"txs_results twice", 0, `{"height":"5","txs_results":[],"txs_results":[]}`, chains.ErrNotStreamable, "height 5: member txs_results repeated"},
		{"end before begin", 0, `{"height":"5","end_block_events":[` + ev + `],"begin_block_events":[` + ev + `]}`, chains.ErrNotStreamable, "height 5: begin_block_events after end_block_events"},
		{"finalize before begin", 0, `{"height":"5","finalize_block_events":[],"begin_block_events":[]}`, chains.ErrNotStreamable, "height 5: begin_block_events after finalize_block_events"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			txs := make([][]byte, tc.txs)
			for i := range txs {
				txs[i] = []byte{1}
			}
			raw := chains.RawBlock{Height: 5, Block: blockJSONFor(5, "c", txs...), Results: json.RawMessage(tc.results)}
			b, err := streamed(raw, Options{}, 1, nil, nil)
			if b != nil || !errors.Is(err, tc.is) || !strings.HasPrefix(err.Error(), tc.message) {
				t.Errorf("err = %v, want %v starting %q", err, tc.is, tc.message)
			}
		})
	}
	// Header errors come first, as in DecodeBlock.
	raw := chains.RawBlock{Height: 5, Block: blockJSONFor(6, "c"), Results: json.RawMessage(`{"height":"5"}`)}
	if _, err := streamed(raw, Options{}, 1, nil, nil); !errors.Is(err, ErrMismatch) || !strings.HasPrefix(err.Error(), "height 5: /block is for height 6") {
		t.Errorf("block height: %v", err)
	}
	// An error of the part callback stops the decode and is returned.
	stop := errors.New("stop")
	raw = chains.RawBlock{Height: 5, Block: blockJSONFor(5, "c", []byte{1}), Results: json.RawMessage(`{"height":"5","txs_results":[{}]}`)}
	if _, err := DecodeBlockStream(raw, bytes.NewReader(raw.Results), Options{}, func(*chains.Block) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("part error: %v", err)
	}
}
