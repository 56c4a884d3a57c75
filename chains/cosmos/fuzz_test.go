package cosmos

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/chainlens/chainlens/chains"
)

// FuzzDecodeBlock feeds arbitrary /block and /block_results JSON (seeded
// with recorded heights of each format) and tx bytes: the decoder must
// return a block or an error, never panic.
func FuzzDecodeBlock(f *testing.F) {
	seed := func(block, results json.RawMessage, h int64) {
		f.Add([]byte(block), []byte(results), h)
	}
	ln := loadLocalnet(f, "osmosis", "localosmosis", "osmo")
	for _, h := range []int64{1, 9, 27, 30} { // 0.38 with txs, failed txs, MsgExec, proposals
		seed(ln.blocks[h-1], ln.results[h-1], h)
	}
	dy := loadLocalnet(f, "dydx", "localdydxprotocol", "dydx")
	seed(dy.blocks[1], dy.results[1], 2) // vote-extension blob
	for _, p := range [][2]string{
		{"cometbft/v0.34/block-10.json", "cometbft/v0.34/block_results-10.json"},
		{"cometbft/v0.37/block-10.json", "cometbft/v0.37/block_results-10.json"},
	} {
		b, _ := rpcFile(f, p[0])
		r, _ := rpcFile(f, p[1])
		seed(b, r, 10)
	}
	for _, p := range []struct {
		file string
		h    int64
	}{
		{"sei/mainnet-block_results-54810790-failed-txs.json", 54810790},
		{"dydx/mainnet-block_results-12791634-missing-type.json", 12791634},
	} {
		r, _ := rpcFile(f, p.file)
		seed(blockJSONFor(p.h, ""), r, p.h)
	}
	reg := registry()
	f.Fuzz(func(t *testing.T, block, results []byte, h int64) {
		for _, enc := range []chains.AttrEncoding{chains.AttrAuto, chains.AttrBase64} {
			b, err := DecodeBlock(chains.RawBlock{Height: h, Block: block, Results: results},
				Options{Bech32Prefix: "osmo", Attrs: enc, Registry: reg})
			if (b == nil) == (err == nil) {
				t.Fatalf("block %v, err %v", b != nil, err)
			}
		}
		// The same bytes as one tx.
		_ = DecodeTx(block, Options{Bech32Prefix: "osmo", Registry: reg})
	})
}

// FuzzDecodeTx feeds arbitrary tx bytes (seeded with recorded txs: SDK and
// chain messages, a smart-account signer, a dYdX vote-extension blob).
func FuzzDecodeTx(f *testing.F) {
	for _, n := range []struct {
		name, chainID, prefix string
		heights               []int64
	}{
		{"osmosis", "localosmosis", "osmo", []int64{4, 9, 27, 29}},
		{"xion", "localxion", "xion", []int64{23, 55}},
		{"dydx", "localdydxprotocol", "dydx", []int64{2}},
	} {
		ln := loadLocalnet(f, n.name, n.chainID, n.prefix)
		for _, h := range n.heights {
			blk, err := parseBlock(ln.blocks[h-1])
			if err != nil {
				f.Fatal(err)
			}
			for _, tx := range blk.txs {
				f.Add(tx)
			}
		}
	}
	reg := registry()
	f.Fuzz(func(t *testing.T, b []byte) {
		tx := DecodeTx(b, Options{Bech32Prefix: "osmo", Registry: reg})
		if tx.Hash != TxHash(b) || (tx.Undecodable && (tx.Messages != nil || tx.Signers != nil)) {
			t.Fatalf("%+v", tx)
		}
		for _, m := range tx.Messages {
			if m.JSON != nil && !json.Valid(m.JSON) {
				t.Fatalf("invalid JSON %s", m.JSON)
			}
		}
	})
}

// FuzzDecodeBlockStream checks the streaming decoder against DecodeBlock
// on arbitrary input: for a /block_results that is one JSON value (what
// the client hands over), both fail, or both give the same Block (after
// the restart a late encoding verdict asks for), or the stream declines
// it as not streamable.
func FuzzDecodeBlockStream(f *testing.F) {
	ln := loadLocalnet(f, "osmosis", "localosmosis", "osmo")
	for _, h := range []int64{1, 9, 27, 30} {
		f.Add([]byte(ln.blocks[h-1]), []byte(ln.results[h-1]), h)
	}
	for _, p := range [][2]string{
		{"cometbft/v0.34/block-10.json", "cometbft/v0.34/block_results-10.json"},
		{"cometbft/v0.37/block-10.json", "cometbft/v0.37/block_results-10.json"},
	} {
		b, _ := rpcFile(f, p[0])
		r, _ := rpcFile(f, p[1])
		f.Add([]byte(b), []byte(r), int64(10))
	}
	r, _ := rpcFile(f, "sei/mainnet-block_results-54810790-failed-txs.json")
	f.Add([]byte(blockJSONFor(54810790, "")), []byte(r), int64(54810790))
	f.Add([]byte(blockJSONFor(7, "", []byte("a"), []byte("b"))),
		[]byte(`{"height":"7","txs_results":[{"events":[{"type":"t","attributes":[{"key":"","value":"dmFs"}]}]},{"events":[{"type":"t","attributes":[{"key":"c2VuZGVy","value":"dmFs"}]}]}]}`), int64(7))
	reg := registry()
	f.Fuzz(func(t *testing.T, block, results []byte, h int64) {
		if !json.Valid(results) {
			return
		}
		for _, enc := range []chains.AttrEncoding{chains.AttrAuto, chains.AttrPlain, chains.AttrBase64} {
			opt := Options{Bech32Prefix: "osmo", Attrs: enc, Registry: reg}
			raw := chains.RawBlock{Height: h, Block: block, Results: results}
			whole, werr := DecodeBlock(raw, opt)
			got, err := streamed(raw, opt, 2, nil, nil)
			var re *chains.RestartError
			if errors.As(err, &re) {
				opt.Attrs = re.Attrs
				got, err = streamed(raw, opt, 2, nil, nil)
			}
			switch {
			case errors.Is(err, chains.ErrNotStreamable):
			case (werr == nil) != (err == nil):
				t.Fatalf("encoding %d: DecodeBlock err %v, stream err %v", enc, werr, err)
			case err == nil && !reflect.DeepEqual(got, whole):
				t.Fatalf("encoding %d: blocks differ\n got %+v\nwant %+v", enc, got, whole)
			}
		}
	})
}
