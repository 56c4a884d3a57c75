package cosmos

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/chainlens/chainlens/chains"
)

// blockJSONFor returns a minimal /block result of height h with the txs.
func blockJSONFor(h int64, chainID string, txs ...[]byte) json.RawMessage {
	enc := make([]string, len(txs))
	for i, b := range txs {
		enc[i] = base64.StdEncoding.EncodeToString(b)
	}
	list, _ := json.Marshal(enc)
	if txs == nil {
		list = []byte("null")
	}
	return json.RawMessage(fmt.Sprintf(`{"block_id":{"hash":"ab12","parts":{"total":1,"hash":"00"}},"block":{"header":{"chain_id":%q,"height":"%d","time":"2024-01-02T03:04:05.5Z","app_hash":"cd","proposer_address":"ef"},"data":{"txs":%s}}}`,
		chainID, h, list))
}

func TestDecodeBlockErrors(t *testing.T) {
	okResults := json.RawMessage(`{"height":"5","txs_results":null}`)
	tests := []struct {
		name    string
		raw     chains.RawBlock
		is      error
		message string
	}{
		{"block height", chains.RawBlock{Height: 5, Block: blockJSONFor(6, "c"), Results: okResults},
			ErrMismatch, "height 5: /block is for height 6"},
		{"results height", chains.RawBlock{Height: 5, Block: blockJSONFor(5, "c"), Results: json.RawMessage(`{"height":"4"}`)},
			ErrMismatch, "height 5: /block_results is for height 4"},
		{"tx count", chains.RawBlock{Height: 5, Block: blockJSONFor(5, "c", []byte{1}, []byte{2}), Results: json.RawMessage(`{"height":"5","txs_results":[{}]}`)},
			ErrMismatch, "height 5: /block has 2 txs but /block_results has 1 txs_results"},
		{"tx count, results without txs", chains.RawBlock{Height: 5, Block: blockJSONFor(5, "c", []byte{1}), Results: okResults},
			ErrMismatch, "height 5: /block has 1 txs but /block_results has 0 txs_results"},
		{"chain id", chains.RawBlock{ChainID: "a", Height: 5, Block: blockJSONFor(5, "b"), Results: okResults},
			ErrMismatch, `height 5: /block is from chain "b", not "a"`},
		{"no block", chains.RawBlock{Height: 5, Block: json.RawMessage(`{"block_id":{}}`), Results: okResults},
			ErrMalformed, "height 5: /block: malformed response: no block"},
		{"block not JSON", chains.RawBlock{Height: 5, Block: json.RawMessage(`{`), Results: okResults},
			ErrMalformed, "height 5: /block: malformed response"},
		{"block missing", chains.RawBlock{Height: 5, Results: okResults},
			ErrMalformed, "height 5: /block: malformed response"},
		{"results missing", chains.RawBlock{Height: 5, Block: blockJSONFor(5, "c")},
			ErrMalformed, "height 5: /block_results: malformed response"},
		{"results wrong type", chains.RawBlock{Height: 5, Block: blockJSONFor(5, "c"), Results: json.RawMessage(`{"height":"5","txs_results":{}}`)},
			ErrMalformed, "height 5: /block_results: malformed response"},
		{"height not a number", chains.RawBlock{Height: 5, Block: blockJSONFor(5, "c"), Results: json.RawMessage(`{"height":"x5"}`)},
			ErrMalformed, "height 5: /block_results: malformed response"},
		{"tx not base64", chains.RawBlock{Height: 5, Block: json.RawMessage(`{"block":{"header":{"height":"5"},"data":{"txs":["!!"]}}}`), Results: json.RawMessage(`{"height":"5","txs_results":[{}]}`)},
			ErrMalformed, "height 5: /block: malformed response: tx 0 is not base64"},
		{"bad time", chains.RawBlock{Height: 5, Block: json.RawMessage(`{"block":{"header":{"height":"5","time":"yesterday"}}}`), Results: okResults},
			ErrMalformed, "height 5: /block: malformed response: header time"},
		{"negative code", chains.RawBlock{Height: 5, Block: blockJSONFor(5, "c", []byte{1}), Results: json.RawMessage(`{"height":"5","txs_results":[{"code":-1}]}`)},
			ErrMalformed, "height 5: /block_results: malformed response: tx result 0: code -1 out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := DecodeBlock(tc.raw, Options{})
			if b != nil || !errors.Is(err, tc.is) || !strings.HasPrefix(err.Error(), tc.message) {
				t.Errorf("err = %v, want %v starting %q", err, tc.is, tc.message)
			}
		})
	}
}

func TestDecodeBlockTolerance(t *testing.T) {
	tests := []struct {
		name    string
		block   json.RawMessage
		results string
		check   func(t *testing.T, b *chains.Block)
	}{
		{
			name:    "null txs, null lists, opaque extras, chain id from header",
			block:   blockJSONFor(7, "hdr"),
			results: `{"height":"7","txs_results":null,"finalize_block_events":null,"validator_updates":[{"pub_key":{"Sum":{"type":"tendermint.crypto.PublicKey_Secp256K1"}},"power":"x"}],"consensus_param_updates":{"abci":{}},"app_hash":null,"total_gas_used":"0"}`,
			check: func(t *testing.T, b *chains.Block) {
				if b.ChainID != "hdr" || b.Hash != "AB12" || b.AppHash != "CD" || b.Proposer != "EF" || b.Txs != nil || b.Events != nil ||
					b.Time.Format("2006-01-02T15:04:05.000") != "2024-01-02T03:04:05.500" {
					t.Errorf("%+v", b)
				}
			},
		},
		{
			name:    "numbers as JSON numbers, missing fields, null values and keys",
			block:   blockJSONFor(7, "", []byte("not a tx"), []byte("also not")),
			results: `{"height":7,"txs_results":[{"code":32,"log":"bad","codespace":"sdk"},{"code":"0","gas_wanted":"-1","gas_used":12,"events":[{"attributes":[{"key":null,"value":null},{"key":"k","value":5}]}]}]}`,
			check: func(t *testing.T, b *chains.Block) {
				t0, t1 := b.Txs[0], b.Txs[1]
				if t0.Code != 32 || t0.Codespace != "sdk" || t0.Log != "bad" || t0.GasWanted != 0 || t0.Events != nil || !t0.Undecodable {
					t.Errorf("tx 0 %+v", t0)
				}
				want := []chains.Attr{{Key: "", Value: ""}, {Key: "k", Value: "5"}}
				if t1.GasWanted != -1 || t1.GasUsed != 12 || len(t1.Events) != 1 || t1.Events[0].Type != "" ||
					!reflect.DeepEqual(t1.Events[0].Attrs, want) || t1.Events[0].TxIndex != 1 {
					t.Errorf("tx 1 %+v", t1)
				}
				if b.Stats.UndecodableTxs != 2 || b.Stats.Base64Attributes {
					t.Errorf("stats %+v", b.Stats)
				}
			},
		},
		{
			name:  "0.37: begin and end lists with plain attributes, numbered across both",
			block: blockJSONFor(7, ""),
			results: `{"height":"7","begin_block_events":[{"type":"a","attributes":[{"key":"mode","value":"x"}]},{"type":"b","attributes":[]}],` +
				`"end_block_events":[{"type":"c","attributes":[{"key":"amount","value":"1u"}]}]}`,
			check: func(t *testing.T, b *chains.Block) {
				got := ""
				for _, ev := range b.Events {
					got += fmt.Sprintf("%d:%s/%s/%d ", ev.Index, ev.Type, ev.Mode, ev.TxIndex)
				}
				if got != "0:a/BeginBlock/-1 1:b/BeginBlock/-1 2:c/EndBlock/-1 " || b.Stats.Base64Attributes {
					t.Errorf("events %s, base64 %v", got, b.Stats.Base64Attributes)
				}
			},
		},
		{
			name:  "0.34: base64 attributes, msg_index parsed after decoding",
			block: blockJSONFor(7, ""),
			results: `{"height":"7","begin_block_events":[{"type":"a","attributes":[{"key":"YW1vdW50","value":null},{"key":"bXNnX2luZGV4","value":"Mw=="}]}],` +
				`"end_block_events":[{"type":"b","attributes":[{"key":"bW9kZQ==","value":"RW5kQmxvY2s="}]}]}`,
			check: func(t *testing.T, b *chains.Block) {
				a, e := b.Events[0], b.Events[1]
				if !b.Stats.Base64Attributes || a.MsgIndex != 3 || a.Attrs[0] != (chains.Attr{Key: "amount"}) || a.Mode != ModeBeginBlock ||
					e.Mode != ModeEndBlock || e.Attrs[0] != (chains.Attr{Key: "mode", Value: "EndBlock"}) {
					t.Errorf("%+v", b.Events)
				}
			},
		},
		{
			name:  "0.38: finalize events take the last mode attribute; bad msg_index is -1",
			block: blockJSONFor(7, ""),
			results: `{"height":"7","finalize_block_events":[{"type":"x","attributes":[{"key":"mode","value":"custom"},{"key":"mode","value":"EndBlock"}]},` +
				`{"type":"y","attributes":[{"key":"msg_index","value":"-2"}]},{"type":"z","attributes":[{"key":"msg_index","value":"zero"}]},{"type":"p","attributes":[]}]}`,
			check: func(t *testing.T, b *chains.Block) {
				got := ""
				for _, ev := range b.Events {
					got += fmt.Sprintf("%s/%s/%d ", ev.Type, ev.Mode, ev.MsgIndex)
				}
				if got != "x/EndBlock/-1 y//-1 z//-1 p//-1 " {
					t.Errorf("%s", got)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := DecodeBlock(chains.RawBlock{Height: 7, Block: tc.block, Results: json.RawMessage(tc.results)}, Options{Registry: registry()})
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, b)
		})
	}
}

func TestAttrEncoding(t *testing.T) {
	ev := func(keys ...string) string {
		var as []string
		for _, k := range keys {
			as = append(as, fmt.Sprintf(`{"key":%q,"value":"dmFs"}`, k))
		}
		return fmt.Sprintf(`{"height":"1","txs_results":[{"events":[{"type":"t","attributes":[%s]}]}]}`, strings.Join(as, ","))
	}
	tests := []struct {
		name    string
		results string
		auto    bool   // detected base64
		plain   string // first value with AttrPlain
		b64     string // first value with AttrBase64
	}{
		{"plain keys", ev("sender", "amount"), false, "dmFs", "val"},
		{"base64 keys", ev("c2VuZGVy", "YW1vdW50"), true, "dmFs", "val"},
		{"four-letter plain key decodes to non-printable bytes", ev("mode"), false, "dmFs", "val"},
		{"one plain key among base64 ones", ev("c2VuZGVy", "fee"), false, "dmFs", "val"},
		{"non-canonical padding bits are rejected", ev("YR=="), false, "dmFs", "val"},
		{"unpadded base64 is not accepted", ev("c2VuZGVyMQ"), false, "dmFs", "val"},
		{"no keys at all", ev(), false, "", ""},
		{"only empty keys", ev("", ""), false, "dmFs", "val"},
		{"base64 of control characters", ev("AAEC"), false, "dmFs", "val"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DetectBase64(json.RawMessage(tc.results))
			if err != nil || got != tc.auto {
				t.Errorf("DetectBase64 = %v %v, want %v", got, err, tc.auto)
			}
			for enc, want := range map[chains.AttrEncoding]string{chains.AttrPlain: tc.plain, chains.AttrBase64: tc.b64} {
				r, err := parseResults(json.RawMessage(tc.results), enc)
				if err != nil {
					t.Fatal(err)
				}
				v := ""
				if attrs := r.txs[0].events[0].Attrs; len(attrs) > 0 {
					v = attrs[0].Value
				}
				if v != want || r.base64 != (enc == chains.AttrBase64) {
					t.Errorf("encoding %d: value %q, want %q", enc, v, want)
				}
			}
		})
	}
	if _, err := DetectBase64(json.RawMessage(`[`)); !errors.Is(err, ErrMalformed) {
		t.Errorf("DetectBase64 of bad JSON: %v", err)
	}
	// Forced base64 keeps text that is not base64.
	r, _ := parseResults(json.RawMessage(ev("sender")), chains.AttrBase64)
	if a := r.txs[0].events[0].Attrs[0]; a.Key != "sender" || a.Value != "val" {
		t.Errorf("forced base64: %+v", a)
	}
}
