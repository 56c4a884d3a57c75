package indexer

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdkmath "cosmossdk.io/math"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
	txtypes "github.com/cosmos/cosmos-sdk/types/tx"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
)

// A synthetic CometBFT 0.38 chain for the heights too large to keep in
// memory: each height's /block_results is written to a file by a
// generator (about the requested size: txs with transfer, coin and
// message events, then finalize_block_events with per-validator rewards
// and commission, a mint event and end-block transfers) and served from
// it, so that neither the test nor its node holds a 100 MB answer.

// synthTx is the bytes of tx i: a cosmos MsgSend tx, or every tenth an
// undecodable blob.
func synthTx(i int) []byte {
	if i%10 == 9 {
		return []byte(fmt.Sprintf("not-a-cosmos-tx-%08d", i))
	}
	msg, err := codectypes.NewAnyWithValue(&banktypes.MsgSend{
		FromAddress: fmt.Sprintf("osmo1%038d", i), ToAddress: fmt.Sprintf("osmo1%038d", i+1),
		Amount: sdk.NewCoins(sdk.NewCoin("uosmo", sdkmath.NewInt(int64(1000+i)))),
	})
	if err != nil {
		panic(err)
	}
	body, _ := (&txtypes.TxBody{Messages: []*codectypes.Any{msg}, Memo: fmt.Sprintf("tx %d", i)}).Marshal()
	auth, _ := (&txtypes.AuthInfo{Fee: &txtypes.Fee{Amount: sdk.NewCoins(sdk.NewCoin("uosmo", sdkmath.NewInt(2500))), GasLimit: 200000}}).Marshal()
	b, _ := (&txtypes.TxRaw{BodyBytes: body, AuthInfoBytes: auth, Signatures: [][]byte{{1, 2, 3}}}).Marshal()
	return b
}

// writeSyntheticResults writes the /block_results result of a height of
// about size bytes (three fifths in txs_results) and returns its tx count.
func writeSyntheticResults(w io.Writer, height int64, size int) (int, error) {
	cw := &countingWriter{w: bufio.NewWriterSize(w, 1<<20)}
	fmt.Fprintf(cw, `{"height":"%d","txs_results":[`, height)
	txs := 0
	for ; txs == 0 || cw.n < int64(size)*3/5; txs++ {
		if txs > 0 {
			cw.WriteString(",")
		}
		i := txs
		if i%50 == 49 {
			fmt.Fprintf(cw, `{"code":5,"data":null,"log":"insufficient funds: %d","info":"","gas_wanted":"200000","gas_used":"61000","events":[{"type":"tx","attributes":[{"key":"fee","value":"2500uosmo","index":true}]}],"codespace":"sdk"}`, i)
			continue
		}
		cw.WriteString(`{"code":0,"data":"","log":"","info":"","gas_wanted":"200000","gas_used":"150000","events":[`)
		fmt.Fprintf(cw, `{"type":"message","attributes":[{"key":"action","value":"/cosmos.bank.v1beta1.MsgSend","index":true},{"key":"sender","value":"osmo1%038d","index":true},{"key":"msg_index","value":"0","index":true}]}`, i)
		for e := range 16 {
			fmt.Fprintf(cw, `,{"type":"transfer","attributes":[{"key":"recipient","value":"osmo1%038d","index":true},{"key":"sender","value":"osmo1%038d","index":true},{"key":"amount","value":"%d000uosmo,%dibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2","index":true},{"key":"msg_index","value":"0","index":true}]}`, i, e, i+e, e+1)
		}
		fmt.Fprintf(cw, `,{"type":"coin_spent","attributes":[{"key":"spender","value":"osmo1%038d","index":true},{"key":"amount","value":"%duosmo","index":true},{"key":"msg_index","value":"0","index":true}]}`, i, 1000+i)
		fmt.Fprintf(cw, `,{"type":"coin_received","attributes":[{"key":"receiver","value":"osmo1%038d","index":true},{"key":"amount","value":"%duosmo","index":true},{"key":"msg_index","value":"0","index":true}]}`, i+1, 1000+i)
		cw.WriteString(`],"codespace":""}`)
	}
	cw.WriteString(`],"finalize_block_events":[`)
	cw.WriteString(`{"type":"mint","attributes":[{"key":"bonded_ratio","value":"0.500000000000000000","index":true},{"key":"inflation","value":"0.100000000000000000","index":true},{"key":"annual_provisions","value":"1000000.500000000000000000","index":true},{"key":"amount","value":"1902","index":true},{"key":"mode","value":"BeginBlock","index":true}]}`)
	for v := 0; v < 3 || cw.n < int64(size)*9/10; v++ {
		fmt.Fprintf(cw, `,{"type":"commission","attributes":[{"key":"amount","value":"%d.123456789012345678uosmo","index":true},{"key":"validator","value":"osmovaloper1%032d","index":true},{"key":"mode","value":"BeginBlock","index":true}]}`, v%997, v)
		fmt.Fprintf(cw, `,{"type":"rewards","attributes":[{"key":"amount","value":"%d.000000000000000001uosmo,%dibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2","index":true},{"key":"validator","value":"osmovaloper1%032d","index":true},{"key":"mode","value":"BeginBlock","index":true}]}`, v%991, v%13, v)
	}
	for e := 0; e < 3 || cw.n < int64(size); e++ {
		fmt.Fprintf(cw, `,{"type":"transfer","attributes":[{"key":"recipient","value":"osmo1%038d","index":true},{"key":"sender","value":"osmo1%038d","index":true},{"key":"amount","value":"%duosmo","index":true},{"key":"mode","value":"EndBlock","index":true}]}`, e, e+7, e+1)
	}
	cw.WriteString(`],"validator_updates":[],"consensus_param_updates":null,"app_hash":""}`)
	if cw.err != nil {
		return 0, cw.err
	}
	return txs, cw.w.(*bufio.Writer).Flush()
}

// syntheticBlock is the /block result of a height with txs synthetic txs.
func syntheticBlock(chainID string, height int64, txs int) []byte {
	enc := make([]string, txs)
	for i := range enc {
		enc[i] = base64.StdEncoding.EncodeToString(synthTx(i))
	}
	list, _ := json.Marshal(enc)
	return []byte(fmt.Sprintf(`{"block_id":{"hash":"%064X","parts":{"total":1,"hash":""}},"block":{"header":{"chain_id":%q,"height":"%d","time":"2026-11-21T00:00:%02dZ","app_hash":"","proposer_address":"AA"},"data":{"txs":%s}}}`,
		height, chainID, height, height%60, list))
}

type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (c *countingWriter) WriteString(s string) { _, _ = c.Write([]byte(s)) }

// synthChain serves synthetic heights 1..last over JSON-RPC, each height's
// /block_results from a file.
type synthChain struct {
	chainID string
	last    int64
	blocks  map[int64][]byte
	txs     map[int64]int
	results map[int64]string // file
	// chunked heights are served without a Content-Length.
	chunked map[int64]bool
	// breaks cuts the first breaks[h].n /block_results answers of height h
	// after breaks[h].after bytes (the connection is closed).
	breaks map[int64]*breakPlan
	// resultsCalls counts /block_results requests per height.
	resultsCalls sync.Map
}

// newSynthChain writes heights 1..last to dir: height h is about sizes[h]
// bytes, or small (about 4 KB) when absent.
func newSynthChain(t testing.TB, dir, chainID string, last int64, sizes map[int64]int) *synthChain {
	t.Helper()
	c := &synthChain{chainID: chainID, last: last, blocks: map[int64][]byte{}, txs: map[int64]int{}, results: map[int64]string{},
		chunked: map[int64]bool{}, breaks: map[int64]*breakPlan{}}
	for h := int64(1); h <= last; h++ {
		size := sizes[h]
		if size == 0 {
			size = 4 << 10
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.json", chainID, h))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		txs, err := writeSyntheticResults(f, h, size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		c.results[h] = path
		c.txs[h] = txs
		c.blocks[h] = syntheticBlock(chainID, h, txs)
	}
	return c
}

type breakPlan struct {
	n     atomic.Int64
	after int64
}

// as returns the same chain under another chain id (the result files are
// shared: they do not name the chain).
func (c *synthChain) as(chainID string) *synthChain {
	d := &synthChain{chainID: chainID, last: c.last, blocks: map[int64][]byte{}, txs: c.txs, results: c.results,
		chunked: map[int64]bool{}, breaks: map[int64]*breakPlan{}}
	for h, b := range c.blocks {
		d.blocks[h] = []byte(strings.Replace(string(b), fmt.Sprintf(`"chain_id":%q`, c.chainID), fmt.Sprintf(`"chain_id":%q`, chainID), 1))
	}
	return d
}

func (c *synthChain) calls(h int64) int64 {
	n, _ := c.resultsCalls.LoadOrStore(h, new(atomic.Int64))
	return n.(*atomic.Int64).Load()
}

func (c *synthChain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params map[string]string `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	head := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":`
	h, _ := strconv.ParseInt(req.Params["height"], 10, 64)
	if req.Method != "status" && (h < 1 || h > c.last) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"Internal error","data":"height %d must be less than or equal to the current blockchain height %d"}}`, req.ID, h, c.last)
		return
	}
	switch req.Method {
	case "status":
		fmt.Fprintf(w, `%s{"node_info":{"network":%q,"version":"0.38.17"},"sync_info":{"latest_block_height":"%d","latest_block_time":"2026-11-21T00:00:00Z","earliest_block_height":"1","catching_up":false}}}`, head, c.chainID, c.last)
	case "block":
		_, _ = w.Write([]byte(head))
		_, _ = w.Write(c.blocks[h])
		_, _ = w.Write([]byte("}"))
	case "block_results":
		n, _ := c.resultsCalls.LoadOrStore(h, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		f, err := os.Open(c.results[h])
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer f.Close()
		fi, _ := f.Stat()
		total := int64(len(head)) + fi.Size() + 1
		if !c.chunked[h] {
			w.Header().Set("Content-Length", strconv.FormatInt(total, 10))
		}
		if b, ok := c.breaks[h]; ok {
			if b.n.Add(-1) >= 0 {
				_, _ = w.Write([]byte(head))
				_, _ = io.CopyN(w, f, b.after)
				w.(http.Flusher).Flush()
				if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
					_ = conn.(*net.TCPConn).SetLinger(0)
					_ = conn.Close()
				}
				return
			}
		}
		_, _ = w.Write([]byte(head))
		_, _ = io.Copy(w, f)
		_, _ = w.Write([]byte("}"))
	default:
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found","data":""}}`, req.ID)
	}
}
