package replaynode

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	rpctypes "github.com/cometbft/cometbft/rpc/jsonrpc/types"
)

func newClient(t *testing.T, n *Node) *rpchttp.HTTP {
	t.Helper()
	srv := httptest.NewServer(n.Handler())
	t.Cleanup(srv.Close)
	cl, err := rpchttp.New(srv.URL, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func ptr[T any](v T) *T { return &v }

// TestCometBFTClient drives the replay node with CometBFT's own RPC client, which decodes every
// reply into CometBFT's types.
func TestCometBFTClient(t *testing.T) {
	for _, c := range recordings {
		t.Run(c.name, func(t *testing.T) {
			rec := loadRecording(t, c.name)
			cl := newClient(t, New(rec, Options{}))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			st, err := cl.Status(ctx)
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			si := st.SyncInfo
			if st.NodeInfo.Network != c.chainID || si.LatestBlockHeight != c.last || si.EarliestBlockHeight != c.first ||
				si.LatestBlockHash.String() != c.lastHash || si.LatestAppHash.String() != c.lastAppHash || si.CatchingUp {
				t.Errorf("Status: network %q, heights %d..%d, hash %s, app hash %s, catching up %v",
					st.NodeInfo.Network, si.EarliestBlockHeight, si.LatestBlockHeight, si.LatestBlockHash, si.LatestAppHash, si.CatchingUp)
			}

			latest, err := cl.Block(ctx, nil)
			if err != nil {
				t.Fatalf("Block(latest): %v", err)
			}
			if latest.Block.Height != c.last || latest.BlockID.Hash.String() != c.lastHash || latest.Block.ChainID != c.chainID {
				t.Errorf("Block(latest): height %d, hash %s, chain %q", latest.Block.Height, latest.BlockID.Hash, latest.Block.ChainID)
			}
			if !si.LatestBlockTime.Equal(latest.Block.Time) {
				t.Errorf("Status latest_block_time %v, block time %v", si.LatestBlockTime, latest.Block.Time)
			}

			for h, want := range c.txsAt {
				b, err := cl.Block(ctx, ptr(h))
				if err != nil {
					t.Fatalf("Block(%d): %v", h, err)
				}
				// The recorded JSON decodes losslessly: the header hashes to the recorded block id.
				if b.Block.Height != h || len(b.Block.Txs) != want || !bytes.Equal(b.Block.Hash(), b.BlockID.Hash) {
					t.Errorf("Block(%d): height %d, %d txs (want %d), header hash %X, block id %s",
						h, b.Block.Height, len(b.Block.Txs), want, b.Block.Hash(), b.BlockID.Hash)
				}
				br, err := cl.BlockResults(ctx, ptr(h))
				if err != nil {
					t.Fatalf("BlockResults(%d): %v", h, err)
				}
				if br.Height != h || len(br.TxsResults) != want {
					t.Errorf("BlockResults(%d): height %d, %d txs_results, want %d", h, br.Height, len(br.TxsResults), want)
				}
				// CometBFT 0.38: block_results(h).app_hash is the next block's header app_hash.
				if next, err := cl.Block(ctx, ptr(h+1)); err == nil && br.AppHash != nil && !bytes.Equal(br.AppHash, next.Block.AppHash) {
					t.Errorf("BlockResults(%d).AppHash %X, Block(%d).AppHash %s", h, br.AppHash, h+1, next.Block.AppHash)
				}
				hd, err := cl.Header(ctx, ptr(h))
				if err != nil || hd.Header.Height != h || !bytes.Equal(hd.Header.Hash(), b.BlockID.Hash) {
					t.Errorf("Header(%d): %v %v", h, hd, err)
				}
			}

			br, err := cl.BlockResults(ctx, nil)
			if err != nil {
				t.Fatalf("BlockResults(latest): %v", err)
			}
			if got := base64.StdEncoding.EncodeToString(br.AppHash); br.Height != c.last || (c.lastResAppHash != "" && got != c.lastResAppHash) {
				t.Errorf("BlockResults(latest): height %d, app hash %s, want %d, %s", br.Height, got, c.last, c.lastResAppHash)
			}

			vals, err := cl.Validators(ctx, nil, nil, nil)
			if err != nil {
				t.Fatalf("Validators: %v", err)
			}
			if vals.BlockHeight != c.last+1 || vals.Count != 1 || vals.Total != 1 || len(vals.Validators) != 1 ||
				!bytes.Equal(vals.Validators[0].Address, st.ValidatorInfo.Address) {
				t.Errorf("Validators: height %d, count %d, total %d, %d validators", vals.BlockHeight, vals.Count, vals.Total, len(vals.Validators))
			}
			if v, err := cl.Validators(ctx, ptr(c.first), ptr(1), ptr(10)); err != nil || v.BlockHeight != c.first {
				t.Errorf("Validators(%d): %v %v", c.first, v, err)
			}

			gen, err := cl.Genesis(ctx)
			if err != nil {
				t.Fatalf("Genesis: %v", err)
			}
			first, err := cl.Block(ctx, ptr(c.first))
			if err != nil {
				t.Fatal(err)
			}
			if gen.Genesis.ChainID != c.chainID || gen.Genesis.InitialHeight != 1 || !gen.Genesis.GenesisTime.Equal(first.Block.Time) ||
				len(gen.Genesis.AppState) == 0 {
				t.Errorf("Genesis: chain %q, initial height %d, time %v (first block %v), %d bytes of app_state",
					gen.Genesis.ChainID, gen.Genesis.InitialHeight, gen.Genesis.GenesisTime, first.Block.Time, len(gen.Genesis.AppState))
			}
			if err := gen.Genesis.ValidateAndComplete(); err != nil {
				t.Errorf("Genesis does not validate: %v", err)
			}
			chunk, err := cl.GenesisChunked(ctx, 0)
			if err != nil {
				t.Fatalf("GenesisChunked: %v", err)
			}
			data, err := base64.StdEncoding.DecodeString(chunk.Data)
			var doc struct {
				ChainID string `json:"chain_id"`
			}
			if err != nil || chunk.TotalChunks != 1 || chunk.ChunkNumber != 0 || json.Unmarshal(data, &doc) != nil || doc.ChainID != c.chainID {
				t.Errorf("GenesisChunked: %d of %d, chain %q, %v", chunk.ChunkNumber, chunk.TotalChunks, doc.ChainID, err)
			}

			bi, err := cl.BlockchainInfo(ctx, 0, 0)
			if err != nil {
				t.Fatalf("BlockchainInfo: %v", err)
			}
			if bi.LastHeight != c.last || len(bi.BlockMetas) != 20 {
				t.Fatalf("BlockchainInfo: last height %d, %d metas", bi.LastHeight, len(bi.BlockMetas))
			}
			for i, m := range bi.BlockMetas {
				h := c.last - int64(i)
				n, _ := rec.BlockTxCount(h)
				if m.Header.Height != h || m.NumTxs != n || m.BlockSize <= 0 || !bytes.Equal(m.Header.Hash(), m.BlockID.Hash) {
					t.Errorf("meta %d: height %d, %d txs (want %d), size %d", i, m.Header.Height, m.NumTxs, n, m.BlockSize)
				}
			}
			bi, err = cl.BlockchainInfo(ctx, c.maxTxsHeight, c.maxTxsHeight)
			if err != nil || len(bi.BlockMetas) != 1 || bi.BlockMetas[0].NumTxs != c.maxTxs {
				t.Errorf("BlockchainInfo(%d, %d): %v %v", c.maxTxsHeight, c.maxTxsHeight, bi, err)
			}

			byHash, err := cl.BlockByHash(ctx, latest.BlockID.Hash)
			if err != nil || byHash.Block == nil || byHash.Block.Height != c.last {
				t.Errorf("BlockByHash: %v %v", byHash, err)
			}
			hdr, err := cl.HeaderByHash(ctx, latest.BlockID.Hash)
			if err != nil || hdr.Header == nil || hdr.Header.Height != c.last {
				t.Errorf("HeaderByHash: %v %v", hdr, err)
			}
			if _, err := cl.Health(ctx); err != nil {
				t.Errorf("Health: %v", err)
			}

			assertRPCError(t, "Block above tip", func() error { _, err := cl.Block(ctx, ptr(c.last+1)); return err },
				-32603, "Internal error", "height "+jsonNum(c.last+1)+" must be less than or equal to the current blockchain height "+jsonNum(c.last))
			assertRPCError(t, "BlockResults above tip", func() error { _, err := cl.BlockResults(ctx, ptr(c.last+5)); return err },
				-32603, "Internal error", "height "+jsonNum(c.last+5)+" must be less than or equal to the current blockchain height "+jsonNum(c.last))
			assertRPCError(t, "Block at 0", func() error { _, err := cl.Block(ctx, ptr(int64(0))); return err },
				-32603, "Internal error", "height must be greater than 0, but got 0")
		})
	}
}

func assertRPCError(t *testing.T, what string, call func() error, code int, message, data string) {
	t.Helper()
	err := call()
	var rpcErr *rpctypes.RPCError
	if !errors.As(err, &rpcErr) {
		t.Errorf("%s: error %v, want an RPC error", what, err)
		return
	}
	if rpcErr.Code != code || rpcErr.Message != message || rpcErr.Data != data {
		t.Errorf("%s: %d %q %q, want %d %q %q", what, rpcErr.Code, rpcErr.Message, rpcErr.Data, code, message, data)
	}
	if want := "RPC error " + jsonNum(int64(code)) + " - " + message + ": " + data; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("%s: error text %q, want suffix %q", what, err, want)
	}
}

func TestCometBFTClientOsmosisDetails(t *testing.T) {
	rec := loadRecording(t, "osmosis")
	cl := newClient(t, New(rec, Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Height 30 holds the six failed txs listed in the README, in order.
	br, err := cl.BlockResults(ctx, ptr(int64(30)))
	if err != nil {
		t.Fatal(err)
	}
	type codeSpace struct {
		code  uint32
		space string
	}
	want := []codeSpace{{5, "wasm"}, {5, "sdk"}, {1, "undefined"}, {1, "undefined"}, {18, "sdk"}, {11, "sdk"}}
	if len(br.TxsResults) != len(want) {
		t.Fatalf("%d txs_results at 30, want %d", len(br.TxsResults), len(want))
	}
	for i, r := range br.TxsResults {
		if (codeSpace{r.Code, r.Codespace}) != want[i] {
			t.Errorf("tx %d: code %d codespace %q, want %v", i, r.Code, r.Codespace, want[i])
		}
	}
	if !strings.HasPrefix(br.TxsResults[5].Log, "out of gas in location: ReadFlat; gasWanted: 120000, gasUsed: 121017") {
		t.Errorf("tx 5 log %q", br.TxsResults[5].Log)
	}

	info, err := cl.ABCIInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Response.Data != "OsmosisApp" || info.Response.LastBlockHeight != 299 ||
		base64.StdEncoding.EncodeToString(info.Response.LastBlockAppHash) != "xIUQy0Iz7GuF8lhDsXbZVDaUEVTWOOhKGJwsCoyXpsk=" {
		t.Errorf("ABCIInfo %+v", info.Response)
	}

	// Batches: two requests, and one request, which CometBFT answers with a bare object.
	batch := cl.NewBatch()
	st, _ := batch.Status(ctx)
	b27, _ := batch.Block(ctx, ptr(int64(27)))
	if _, err := batch.Send(ctx); err != nil {
		t.Fatalf("batch of 2: %v", err)
	}
	if st.SyncInfo.LatestBlockHeight != 299 || len(b27.Block.Txs) != 6 {
		t.Errorf("batch of 2: height %d, %d txs at 27", st.SyncInfo.LatestBlockHeight, len(b27.Block.Txs))
	}
	// A real CometBFT 0.38 node answers a batch of one with a bare object; the client then returns
	// the raw result instead of filling the typed one, and so it does here.
	batch = cl.NewBatch()
	b4, _ := batch.Block(ctx, ptr(int64(4)))
	out, err := batch.Send(ctx)
	if err != nil {
		t.Fatalf("batch of 1: %v", err)
	}
	raw, ok := out[0].(json.RawMessage)
	if len(out) != 1 || !ok || b4.Block != nil {
		t.Fatalf("batch of 1: got %T, typed block filled: %v", out[0], b4.Block != nil)
	}
	var res struct {
		Block struct {
			Data struct {
				Txs []string `json:"txs"`
			} `json:"data"`
		} `json:"block"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Block.Data.Txs) != 3 {
		t.Errorf("batch of 1: %d txs at 4, want 3 (%v)", len(res.Block.Data.Txs), err)
	}
}

func TestCometBFTClientDydxGenesisAndBlobs(t *testing.T) {
	rec := loadRecording(t, "dydx")
	cl := newClient(t, New(rec, Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gen, err := cl.Genesis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := gen.Genesis.ConsensusParams
	if p == nil || p.Block.MaxBytes != 4194304 || p.ABCI.VoteExtensionsEnableHeight != 1 || len(gen.Genesis.AppHash) != 0 {
		t.Errorf("consensus params %+v, app hash %X", p, gen.Genesis.AppHash)
	}
	// From height 2, txs[0] is the vote-extension blob; its result is code 2, codespace sdk.
	br, err := cl.BlockResults(ctx, ptr(int64(2)))
	if err != nil {
		t.Fatal(err)
	}
	if r := br.TxsResults[0]; r.Code != 2 || r.Codespace != "sdk" || r.Log != "tx parse error" || br.AppHash != nil {
		t.Errorf("blob result: code %d codespace %q log %q, app hash %X", r.Code, r.Codespace, r.Log, br.AppHash)
	}
}

// TestProgressiveReveal runs the node with a short block time and watches the tip through the
// client until it reaches the last height.
func TestProgressiveReveal(t *testing.T) {
	rec := loadRecording(t, "osmosis")
	const start = 290
	n := New(rec, Options{BlockTime: 20 * time.Millisecond, StartHeight: start})
	cl := newClient(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	st, err := cl.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.SyncInfo.LatestBlockHeight != start {
		t.Fatalf("tip before Run %d, want %d", st.SyncInfo.LatestBlockHeight, start)
	}
	assertRPCError(t, "Block above the start height", func() error { _, err := cl.Block(ctx, ptr(int64(start+1))); return err },
		-32603, "Internal error", "height 291 must be less than or equal to the current blockchain height 290")

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- n.Run(runCtx) }()

	prev := int64(start)
	deadline := time.Now().Add(20 * time.Second)
	for prev < rec.LastHeight() {
		if time.Now().After(deadline) {
			t.Fatalf("tip stuck at %d", prev)
		}
		st, err := cl.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		h := st.SyncInfo.LatestBlockHeight
		if h < prev || h > rec.LastHeight() {
			t.Fatalf("tip went from %d to %d (last recorded %d)", prev, h, rec.LastHeight())
		}
		if h > prev {
			b, err := cl.Block(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b.Block.Height < h || !bytes.Equal(st.SyncInfo.LatestBlockHash, mustHash(ctx, t, cl, h)) {
				t.Fatalf("at tip %d: latest block %d", h, b.Block.Height)
			}
		}
		prev = h
		time.Sleep(2 * time.Millisecond)
	}
	// The tip stays at the last height (a pause here cannot make the test flaky, only slower).
	time.Sleep(100 * time.Millisecond)
	if n.Height() != rec.LastHeight() {
		t.Errorf("tip %d after the end, want %d", n.Height(), rec.LastHeight())
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func mustHash(ctx context.Context, t *testing.T, cl *rpchttp.HTTP, h int64) []byte {
	t.Helper()
	b, err := cl.Block(ctx, ptr(h))
	if err != nil {
		t.Fatal(err)
	}
	return b.BlockID.Hash
}
