package replaynode

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// localnetDir holds the project's copies of the localnet recordings.
var localnetDir = filepath.Join("..", "..", "testdata", "localnet")

// chainFacts are exact values of one recording, computed from the files and cross-checked
// against the numbers written in its README (heights, blocks, txs, blocks with txs, max txs).
type chainFacts struct {
	name           string
	chainID        string
	first, last    int64
	blocks         int
	txs            int // README: total txs in blocks
	blocksWithTxs  int
	maxTxsHeight   int64
	maxTxs         int
	txsAt          map[int64]int // exact tx counts at some heights
	lastHash       string        // block_id.hash of the last block
	lastAppHash    string        // header.app_hash of the last block
	lastResAppHash string        // block_results app_hash of the last block (base64); "" when null
	abciInfo       bool
	statusAtLast   bool // status.json was captured exactly at the last recorded height
}

var recordings = []chainFacts{
	{
		name: "osmosis", chainID: "localosmosis", first: 1, last: 299, blocks: 299,
		txs: 395, blocksWithTxs: 176, maxTxsHeight: 27, maxTxs: 6, // README: "395 txs in 176 blocks (max 6 txs in block 27)"
		txsAt:          map[int64]int{1: 0, 4: 3, 5: 1, 27: 6, 30: 6, 299: 0},
		lastHash:       "35FBC2ED905B485EE7DBA5B86F8F98C9B2C4EAE575B1A7AEAA8482DE21619B57",
		lastAppHash:    "3EBC19ED17EB8978C12526BD73CB0BB7C46021CCEC1AFA07F0F9558F9D7407BD",
		lastResAppHash: "xIUQy0Iz7GuF8lhDsXbZVDaUEVTWOOhKGJwsCoyXpsk=",
		abciInfo:       true, statusAtLast: true,
	},
	{
		name: "dydx", chainID: "localdydxprotocol", first: 1, last: 520, blocks: 520,
		txs: 2621, blocksWithTxs: 520, maxTxsHeight: 5, maxTxs: 7, // README: "Block txs (all, including the vote-extension blobs) 2621"
		txsAt:       map[int64]int{1: 4, 2: 5, 5: 7},
		lastHash:    "FB9DFD000C4A5F9DD465DD0F16E4688A57BBE354BECDD8051E972D9ABD01E37C",
		lastAppHash: "7A24528FCFE44B53A464E2CC7A3D2807B8DD0462006A95EEF154FFB2BB37B696",
		// dYdX's block_results carry "app_hash": null; its status.json was taken at height 555.
	},
	{
		name: "neutron", chainID: "localneutron", first: 1, last: 193, blocks: 193,
		txs: 148, blocksWithTxs: 100, maxTxsHeight: 25, maxTxs: 3, // README: "148 in 100 blocks (max 3 txs in block 25)"
		txsAt:          map[int64]int{16: 0, 17: 2, 18: 1, 25: 3},
		lastHash:       "B97498F004072DA614B6C8B28400A8FB53E2168E32E3A234110EE7B33C444F52",
		lastAppHash:    "8B6D822546A58EB711ECBC76870CB5D92640E6F20422A59D32FE6CCD663AAA39",
		lastResAppHash: "jqSgf8F8i0P/XxY1TYQbysjCRgUpQjm9Wh0Fgr8U9t4=",
		statusAtLast:   true,
	},
	{
		name: "xion", chainID: "localxion", first: 1, last: 141, blocks: 141,
		txs: 84, blocksWithTxs: 84, maxTxsHeight: 9, maxTxs: 1, // README: "84 in 84 blocks (max 1 in block 9)"
		txsAt:          map[int64]int{8: 0, 9: 1, 10: 0, 11: 1},
		lastHash:       "043D4EBC5EE4D7FC6902D378A623153FA5436C1A253D8F9C871ADB6E4122143D",
		lastAppHash:    "E26E1C5C27C962FC92F5CB2189755B2E5DB28FB03B9C41F3586BAAA82E9A4F7D",
		lastResAppHash: "4wVf4EP49adqCRSrOPR9tF0OHSdIys8PjgyEs4Njxxg=",
		statusAtLast:   true,
	},
	{
		name: "cosmoshub", chainID: "localcosmos", first: 1, last: 169, blocks: 169,
		txs: 148, blocksWithTxs: 109, maxTxsHeight: 21, maxTxs: 5, // README: "148 in 109 blocks (max 5 in block 21)"
		txsAt:          map[int64]int{18: 0, 19: 3, 20: 1, 21: 5, 22: 2},
		lastHash:       "437073ED08374C3C78DFAA1D3BC3FB56EAAC3F2B1CD2B53E70D4B1C61BE61E36",
		lastAppHash:    "3D96154BE0DFB29A54A055F7BFEAC41AC384EA85FFD4E6DE241812AD68624057",
		lastResAppHash: "+Z8EM0Kbhp7uC+FCXpjSTd6CyjQNEr5pxwV1SYGiIE8=",
		statusAtLast:   true,
	},
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Recording{}
)

// loadRecording loads testdata/localnet/<name> once per test binary.
func loadRecording(t *testing.T, name string) *Recording {
	t.Helper()
	loadMu.Lock()
	defer loadMu.Unlock()
	if rec, ok := loaded[name]; ok {
		return rec
	}
	rec, err := Load(filepath.Join(localnetDir, name))
	if err != nil {
		t.Fatalf("Load(%s): %v", name, err)
	}
	loaded[name] = rec
	return rec
}

func TestLoadRecordings(t *testing.T) {
	for _, c := range recordings {
		t.Run(c.name, func(t *testing.T) {
			rec := loadRecording(t, c.name)
			if got := rec.ChainID(); got != c.chainID {
				t.Errorf("ChainID = %q, want %q", got, c.chainID)
			}
			if got := rec.FirstHeight(); got != c.first {
				t.Errorf("FirstHeight = %d, want %d", got, c.first)
			}
			if got := rec.LastHeight(); got != c.last {
				t.Errorf("LastHeight = %d, want %d", got, c.last)
			}
			if got := rec.NumBlocks(); got != c.blocks {
				t.Errorf("NumBlocks = %d, want %d", got, c.blocks)
			}
			if got := rec.TxCount(); got != c.txs {
				t.Errorf("TxCount = %d, want %d", got, c.txs)
			}
			if got := rec.HasABCIInfo(); got != c.abciInfo {
				t.Errorf("HasABCIInfo = %v, want %v", got, c.abciInfo)
			}
			withTxs, sum, maxTxs, maxAt := 0, 0, -1, int64(0)
			for h := rec.FirstHeight(); h <= rec.LastHeight(); h++ {
				n, ok := rec.BlockTxCount(h)
				if !ok {
					t.Fatalf("BlockTxCount(%d) not recorded", h)
				}
				sum += n
				if n > 0 {
					withTxs++
				}
				if n > maxTxs {
					maxTxs, maxAt = n, h
				}
			}
			if sum != c.txs || withTxs != c.blocksWithTxs || maxTxs != c.maxTxs || maxAt != c.maxTxsHeight {
				t.Errorf("per-block txs: sum %d, blocks with txs %d, max %d at %d; want %d, %d, %d at %d",
					sum, withTxs, maxTxs, maxAt, c.txs, c.blocksWithTxs, c.maxTxs, c.maxTxsHeight)
			}
			for h, want := range c.txsAt {
				if got, _ := rec.BlockTxCount(h); got != want {
					t.Errorf("BlockTxCount(%d) = %d, want %d", h, got, want)
				}
			}
			for _, h := range []int64{c.first - 1, c.last + 1} {
				if _, ok := rec.BlockTxCount(h); ok {
					t.Errorf("BlockTxCount(%d) reported a block outside the recording", h)
				}
			}
		})
	}
}

// readLines returns the lines of a gzip jsonl file.
func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, maxLineBytes)
	var lines [][]byte
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func writeGzipLines(t *testing.T, path string, lines [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, l := range lines {
		zw.Write(l)
		zw.Write([]byte{'\n'})
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// smallRecording writes a recording made of the given osmosis block and block_results lines
// (0-based indexes into the real files) plus the real status, validators and genesis.
func smallRecording(t *testing.T, blockIdx, resultIdx []int) string {
	t.Helper()
	src := filepath.Join(localnetDir, "osmosis")
	blocks := readLines(t, filepath.Join(src, blocksFile))
	results := readLines(t, filepath.Join(src, resultsFile))
	pick := func(all [][]byte, idx []int) [][]byte {
		out := make([][]byte, len(idx))
		for i, j := range idx {
			out[i] = all[j]
		}
		return out
	}
	dir := t.TempDir()
	writeGzipLines(t, filepath.Join(dir, blocksFile), pick(blocks, blockIdx))
	writeGzipLines(t, filepath.Join(dir, resultsFile), pick(results, resultIdx))
	for _, f := range []string{statusFile, validatorsFile, genesisFile} {
		copyFile(t, filepath.Join(src, f), filepath.Join(dir, f))
	}
	return dir
}

func TestLoadSmallRecording(t *testing.T) {
	dir := smallRecording(t, []int{3, 4, 5}, []int{3, 4, 5})
	rec, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.FirstHeight() != 4 || rec.LastHeight() != 6 || rec.TxCount() != 3+1+1 || rec.HasABCIInfo() {
		t.Fatalf("got heights %d..%d, %d txs, abci_info %v; want 4..6, 5 txs, false",
			rec.FirstHeight(), rec.LastHeight(), rec.TxCount(), rec.HasABCIInfo())
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T) string
		wantSub string
		wantIs  error
	}{
		{
			name: "missing blocks file",
			setup: func(t *testing.T) string {
				dir := smallRecording(t, []int{0}, []int{0})
				os.Remove(filepath.Join(dir, blocksFile))
				return dir
			},
			wantSub: blocksFile, wantIs: fs.ErrNotExist,
		},
		{
			name: "not gzip",
			setup: func(t *testing.T) string {
				dir := smallRecording(t, []int{0}, []int{0})
				os.WriteFile(filepath.Join(dir, blocksFile), []byte(`{"jsonrpc":"2.0","id":-1,"result":{}}`+"\n"), 0o644)
				return dir
			},
			wantSub: "replaynode: blocks.jsonl.gz: ", wantIs: gzip.ErrHeader,
		},
		{
			name: "malformed JSON on line 2",
			setup: func(t *testing.T) string {
				dir := smallRecording(t, []int{0, 1}, []int{0, 1})
				lines := readLines(t, filepath.Join(dir, blocksFile))
				lines[1] = lines[1][:len(lines[1])/2]
				writeGzipLines(t, filepath.Join(dir, blocksFile), lines)
				return dir
			},
			wantSub: "replaynode: blocks.jsonl.gz:2: decode JSON-RPC reply: ",
		},
		{
			name: "empty line",
			setup: func(t *testing.T) string {
				dir := smallRecording(t, []int{0, 1}, []int{0, 1})
				lines := readLines(t, filepath.Join(dir, blocksFile))
				writeGzipLines(t, filepath.Join(dir, blocksFile), [][]byte{lines[0], {}, lines[1]})
				return dir
			},
			wantSub: "replaynode: blocks.jsonl.gz:2: empty line",
		},
		{
			name:    "gap in heights",
			setup:   func(t *testing.T) string { return smallRecording(t, []int{0, 2}, []int{0, 2}) },
			wantSub: "replaynode: blocks.jsonl.gz:2: height 3, want 2 (heights must be contiguous)",
		},
		{
			name:    "block_results out of order",
			setup:   func(t *testing.T) string { return smallRecording(t, []int{0, 1, 2}, []int{0, 2, 1}) },
			wantSub: `replaynode: block_results.jsonl.gz:2: block_results height "3", want 2 (line 2 of blocks.jsonl.gz)`,
		},
		{
			name:    "fewer block_results than blocks",
			setup:   func(t *testing.T) string { return smallRecording(t, []int{0, 1, 2}, []int{0, 1}) },
			wantSub: "replaynode: block_results.jsonl.gz: 2 lines for 3 blocks in blocks.jsonl.gz",
		},
		{
			name:    "more block_results than blocks",
			setup:   func(t *testing.T) string { return smallRecording(t, []int{0}, []int{0, 1}) },
			wantSub: "replaynode: block_results.jsonl.gz:2: more block_results lines than the 1 blocks in blocks.jsonl.gz",
		},
		{
			name: "txs_results count differs from txs",
			setup: func(t *testing.T) string {
				dir := smallRecording(t, []int{3}, []int{3})
				lines := readLines(t, filepath.Join(dir, resultsFile))
				var env map[string]any
				if err := json.Unmarshal(lines[0], &env); err != nil {
					t.Fatal(err)
				}
				env["result"].(map[string]any)["txs_results"] = nil
				b, _ := json.Marshal(env)
				writeGzipLines(t, filepath.Join(dir, resultsFile), [][]byte{b})
				return dir
			},
			wantSub: "replaynode: block_results.jsonl.gz:1: height 4: 0 txs_results for 3 txs in the block",
		},
		{
			name: "recorded JSON-RPC error",
			setup: func(t *testing.T) string {
				dir := smallRecording(t, []int{0}, []int{0})
				writeGzipLines(t, filepath.Join(dir, blocksFile), [][]byte{[]byte(
					`{"error":{"code":-32603,"data":"height must be greater than 0, but got 0","message":"Internal error"},"id":"x","jsonrpc":"2.0"}`)})
				return dir
			},
			wantSub: `replaynode: blocks.jsonl.gz:1: recorded reply is a JSON-RPC error: {"code":-32603,`,
		},
		{
			name: "status of another chain",
			setup: func(t *testing.T) string {
				dir := smallRecording(t, []int{0}, []int{0})
				copyFile(t, filepath.Join(localnetDir, "neutron", statusFile), filepath.Join(dir, statusFile))
				return dir
			},
			wantSub: `replaynode: status.json: node_info.network "localneutron", but the blocks are for chain "localosmosis"`,
		},
		{
			name: "genesis of another chain",
			setup: func(t *testing.T) string {
				dir := smallRecording(t, []int{0}, []int{0})
				copyFile(t, filepath.Join(localnetDir, "dydx", genesisFile), filepath.Join(dir, genesisFile))
				return dir
			},
			wantSub: `replaynode: genesis.json.gz: chain_id "localdydxprotocol", but the blocks are for chain "localosmosis"`,
		},
		{
			name: "validators file is not JSON",
			setup: func(t *testing.T) string {
				dir := smallRecording(t, []int{0}, []int{0})
				os.WriteFile(filepath.Join(dir, validatorsFile), []byte("nope"), 0o644)
				return dir
			},
			wantSub: "replaynode: validators.json: decode JSON-RPC reply: ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.setup(t))
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.wantSub) {
				t.Errorf("error %q does not contain %q", err, tt.wantSub)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q is not %v", err, tt.wantIs)
			}
		})
	}
}

// TestBlockSizeMatchesCometBFT checks the computed block_size against a real CometBFT 0.38 node's
// /blockchain reply for the same blocks (recorded in testdata/cometbft/v0.38).
func TestBlockSizeMatchesCometBFT(t *testing.T) {
	ref := filepath.Join("..", "..", "testdata", "cometbft", "v0.38")
	metasJSON, err := os.ReadFile(filepath.Join(ref, "blockchain-1-10.json"))
	if err != nil {
		t.Fatal(err)
	}
	var metas struct {
		Result struct {
			BlockMetas []struct {
				BlockID struct {
					Hash string `json:"hash"`
				} `json:"block_id"`
				BlockSize string `json:"block_size"`
			} `json:"block_metas"`
		} `json:"result"`
	}
	if err := json.Unmarshal(metasJSON, &metas); err != nil {
		t.Fatal(err)
	}
	sizes := map[string]string{}
	for _, m := range metas.Result.BlockMetas {
		sizes[m.BlockID.Hash] = m.BlockSize
	}
	for _, tt := range []struct {
		file string
		want int
	}{{"block-1.json", 322}, {"block-10.json", 569}} {
		b, err := os.ReadFile(filepath.Join(ref, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		res, err := envelopeResult(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := blockSize(res)
		if err != nil {
			t.Fatal(err)
		}
		var id struct {
			BlockID struct {
				Hash string `json:"hash"`
			} `json:"block_id"`
		}
		json.Unmarshal(res, &id)
		if got != tt.want || sizes[id.BlockID.Hash] != strings.Trim(string(quotedInt(int64(got))), `"`) {
			t.Errorf("%s: block size %d, want %d (node reported %s)", tt.file, got, tt.want, sizes[id.BlockID.Hash])
		}
	}
}

func TestRun(t *testing.T) {
	rec := loadRecording(t, "osmosis")

	t.Run("static node returns nil on cancel", func(t *testing.T) {
		n := New(rec, Options{})
		if n.Height() != 299 {
			t.Fatalf("Height = %d, want 299", n.Height())
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- n.Run(ctx) }()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run = %v, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
	})

	t.Run("start height is clamped", func(t *testing.T) {
		for _, tt := range []struct {
			opt  Options
			want int64
		}{
			{Options{}, 299},
			{Options{StartHeight: 100}, 100},
			{Options{StartHeight: -5}, 1},
			{Options{StartHeight: 1000}, 299},
			{Options{BlockTime: time.Second}, 1},
			{Options{BlockTime: time.Second, StartHeight: 250}, 250},
		} {
			if got := New(rec, tt.opt).Height(); got != tt.want {
				t.Errorf("New(%+v).Height() = %d, want %d", tt.opt, got, tt.want)
			}
		}
	})

	t.Run("second concurrent Run fails", func(t *testing.T) {
		n := New(rec, Options{BlockTime: time.Hour, StartHeight: 10})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- n.Run(ctx) }()
		deadline := time.Now().Add(5 * time.Second)
		for !n.running.Load() {
			if time.Now().After(deadline) {
				t.Fatal("first Run did not start")
			}
			time.Sleep(time.Millisecond)
		}
		if err := n.Run(ctx); err == nil {
			t.Error("second Run succeeded, want an error")
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("first Run = %v, want nil", err)
		}
		if n.Height() != 10 {
			t.Errorf("Height = %d, want 10 (one hour block time)", n.Height())
		}
	})
}
