package evm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/uptrace/bun"

	chainevm "github.com/chainlens/chainlens/chains/evm"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer"
	evmindexer "github.com/chainlens/chainlens/indexer/evm"
)

const chainID = "devnet-1337"

// newIndexer returns an indexer of the dev chain's tokens reached at rpcURL
// (the node or a proxy in front of it), with fast retries.
func newIndexer(t testing.TB, db *bun.DB, rpcURL string, cfg config.Chain, log *slog.Logger, tokens ...contract) *evmindexer.Indexer {
	t.Helper()
	cfg.ID, cfg.Kind, cfg.RPC = chainID, "evm", []string{rpcURL}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 3
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 2
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = config.Duration(20 * time.Millisecond)
	}
	for _, c := range tokens {
		cfg.Tokens = append(cfg.Tokens, config.Token{Address: c.addr.Hex(), Symbol: c.name})
	}
	clients, err := evmindexer.Dial(cfg.RPC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { evmindexer.CloseAll(clients) })
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		if os.Getenv("EVM_TEST_LOG") != "" { // debugging aid: the indexer's warnings on stderr
			log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		}
	}
	m, _ := indexer.NewMetrics(nil)
	x := evmindexer.New(cfg, db, clients, log, m)
	x.Retry = evmindexer.Retry{Attempts: 3, Base: 5 * time.Millisecond, Max: 20 * time.Millisecond}
	return x
}

// row is one erc20_transfers row.
type row struct {
	Height    int64  `bun:"height"`
	TxHash    string `bun:"tx_hash"`
	LogIndex  int64  `bun:"log_index"`
	Token     string `bun:"token"`
	Sender    string `bun:"sender"`
	Recipient string `bun:"recipient"`
	Amount    string `bun:"amount"`
	Kind      string `bun:"kind"`
}

func (r row) String() string {
	return fmt.Sprintf("%d/%d %s %s %s->%s %s (tx %.10s)", r.Height, r.LogIndex, r.Kind, r.Token[:8], r.Sender[:8], r.Recipient[:8], r.Amount, r.TxHash)
}

func dbRows(t testing.TB, db *bun.DB) []row {
	t.Helper()
	var out []row
	if err := db.NewRaw(`SELECT height, tx_hash, log_index, token, sender, recipient, amount::text AS amount, kind
		FROM erc20_transfers WHERE chain_id = ? ORDER BY height, log_index`, chainID).Scan(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func count(t testing.TB, db *bun.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.NewRaw(q, args...).Scan(context.Background(), &n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func sameRows(t testing.TB, what string, got, want []row) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d rows, want %d\n", what, len(got), len(want))
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i].String()
		}
		if i < len(want) {
			w = want[i].String()
		}
		mark := "  "
		if g != w {
			mark = "! "
		}
		fmt.Fprintf(&b, "%sgot %-70s want %s\n", mark, g, w)
	}
	t.Fatal(b.String())
}

// expected collects the rows the test's transactions must produce.
type expected struct {
	n       *devNode
	pending []pendingRow
	rows    []row
}

type pendingRow struct {
	tx             common.Hash
	c              contract
	kind, from, to string
	amount         *big.Int
}

// want records that tx produces one movement; from/to are account names,
// "" for the zero address, or "0x…" addresses.
func (e *expected) want(tx common.Hash, c contract, kind, from, to string, amount *big.Int) {
	e.pending = append(e.pending, pendingRow{tx, c, kind, from, to, amount})
}

func (e *expected) who(name string) string {
	switch {
	case name == "":
		return chainevm.ZeroAddress
	case strings.HasPrefix(name, "0x"):
		return strings.ToLower(name)
	}
	return strings.ToLower(e.n.addr(name).Hex())
}

// resolve reads the receipts of the recorded transactions (after commit)
// and turns them into rows with their block and log index.
func (e *expected) resolve() {
	e.n.t.Helper()
	for _, p := range e.pending {
		r := e.n.receipt(p.tx)
		if r.Status != 1 {
			e.n.t.Fatalf("tx %s (%s %s) failed", p.tx.Hex(), p.c.name, p.kind)
		}
		found := false
		for _, l := range r.Logs {
			if l.Address == p.c.addr && slices.Contains(chainevm.Topics(), l.Topics[0]) {
				e.rows = append(e.rows, row{Height: r.BlockNumber.Int64(), TxHash: p.tx.Hex(), LogIndex: int64(l.Index), Token: p.c.address(),
					Sender: e.who(p.from), Recipient: e.who(p.to), Amount: p.amount.String(), Kind: p.kind})
				found = true
				break
			}
		}
		if !found {
			e.n.t.Fatalf("tx %s emitted no token movement", p.tx.Hex())
		}
	}
	e.pending = nil
	slices.SortFunc(e.rows, func(a, b row) int {
		if a.Height != b.Height {
			return int(a.Height - b.Height)
		}
		return int(a.LogIndex - b.LogIndex)
	})
}

// truncate drops the rows above height (a fork replaced those blocks).
func (e *expected) truncate(height int64) {
	e.rows = slices.DeleteFunc(e.rows, func(r row) bool { return r.Height > height })
}

// nodeRows decodes the node's own eth_getLogs answer for [0, to] (no
// proxy, one call) with chains/evm: a second, independent oracle.
func nodeRows(t testing.TB, n *devNode, to int64, tokens ...contract) []row {
	t.Helper()
	var addrs []common.Address
	for _, c := range tokens {
		addrs = append(addrs, c.addr)
	}
	logs, err := n.c.FilterLogs(n.ctx(), ethereum.FilterQuery{FromBlock: big.NewInt(0), ToBlock: big.NewInt(to), Addresses: addrs, Topics: [][]common.Hash{chainevm.Topics()}})
	if err != nil {
		t.Fatal(err)
	}
	var out []row
	for i := range logs {
		m, ok := chainevm.Decode(&logs[i])
		if !ok {
			continue
		}
		if m.Owner != chainevm.OwnerNone {
			for _, c := range tokens {
				if c.addr == logs[i].Address {
					m.SetOwner(n.view(c, m.Height, "owner").(common.Address).Hex())
				}
			}
		}
		out = append(out, row{m.Height, m.TxHash, m.LogIndex, m.Token, m.From, m.To, m.Amount, m.Kind})
	}
	return out
}

// checkBlocks asserts that evm_blocks holds exactly blocks 0..to with the
// node's hashes, linked by parent hash, and that the checkpoint is to+1.
func checkBlocks(t testing.TB, n *devNode, db *bun.DB, to int64) {
	t.Helper()
	var blocks []struct {
		Height int64  `bun:"height"`
		Hash   string `bun:"hash"`
		Parent string `bun:"parent_hash"`
	}
	if err := db.NewRaw("SELECT height, hash, parent_hash FROM evm_blocks WHERE chain_id = ? ORDER BY height", chainID).Scan(context.Background(), &blocks); err != nil {
		t.Fatal(err)
	}
	if int64(len(blocks)) != to+1 {
		t.Fatalf("evm_blocks has %d blocks, want %d", len(blocks), to+1)
	}
	for i, b := range blocks {
		if b.Height != int64(i) {
			t.Fatalf("evm_blocks row %d has height %d", i, b.Height)
		}
		if want := n.hashAt(b.Height); b.Hash != want {
			t.Fatalf("block %d: stored %s, node %s", b.Height, b.Hash, want)
		}
		if i > 0 && b.Parent != blocks[i-1].Hash {
			t.Fatalf("block %d: parent %s, stored block below %s", b.Height, b.Parent, blocks[i-1].Hash)
		}
	}
	if got := count(t, db, "SELECT next_height FROM sync_state WHERE chain_id = ? AND kind = 'evm'", chainID); got != to+1 {
		t.Fatalf("checkpoint %d, want %d", got, to+1)
	}
}

// checkBalances rebuilds every balance of token c at height from
// erc20_transfers and compares it with balanceOf by eth_call at that
// block; the supply (mints - burns) must equal totalSupply.
func checkBalances(t testing.TB, n *devNode, db *bun.DB, c contract, height int64) {
	t.Helper()
	var rebuilt []struct {
		Addr string `bun:"addr"`
		Bal  string `bun:"bal"`
	}
	if err := db.NewRaw(`SELECT addr, sum(delta)::text AS bal FROM (
			SELECT recipient AS addr, amount AS delta FROM erc20_transfers WHERE chain_id = ? AND token = ? AND height <= ?
			UNION ALL
			SELECT sender, -amount FROM erc20_transfers WHERE chain_id = ? AND token = ? AND height <= ?
		) m WHERE addr <> ? GROUP BY addr`, chainID, c.address(), height, chainID, c.address(), height, chainevm.ZeroAddress).Scan(context.Background(), &rebuilt); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rebuilt {
		got[r.Addr] = r.Bal
	}
	addrs := map[string]common.Address{}
	for _, name := range accounts {
		addrs[strings.ToLower(n.addr(name).Hex())] = n.addr(name)
	}
	for a := range got {
		addrs[a] = common.HexToAddress(a)
	}
	for lower, a := range addrs {
		want := n.view(c, height, "balanceOf", a).(*big.Int).String()
		g := got[lower]
		if g == "" {
			g = "0"
		}
		if g != want {
			t.Errorf("%s balance of %s at %d: rebuilt %s, balanceOf %s", c.name, lower, height, g, want)
		}
	}
	var supply string
	if err := db.NewRaw(`SELECT coalesce(sum(CASE kind WHEN 'mint' THEN amount WHEN 'burn' THEN -amount ELSE 0 END), 0)::text
		FROM erc20_transfers WHERE chain_id = ? AND token = ? AND height <= ?`, chainID, c.address(), height).Scan(context.Background(), &supply); err != nil {
		t.Fatal(err)
	}
	if want := n.view(c, height, "totalSupply").(*big.Int).String(); supply != want {
		t.Errorf("%s at %d: mints - burns = %s, totalSupply %s", c.name, height, supply, want)
	}
}

// proxy sits between the indexer and the node and misbehaves on purpose.
type proxy struct {
	srv *httptest.Server
	rp  *httputil.ReverseProxy

	mu        sync.Mutex
	limit     int64 // eth_getLogs over more blocks: "query returned more than 10000 results"
	failFirst int   // the first requests answered with HTTP 503
	badBlock  int64 // eth_getLogs covering it: a JSON-RPC error (0 = off)
	logsDown  bool  // every eth_getLogs answered with HTTP 503
	calls     []logCall
	failed    int
}

type logCall struct {
	size     int64
	accepted bool
}

func newProxy(t testing.TB, target string) *proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{rp: httputil.NewSingleHostReverseProxy(u)}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *proxy) URL() string { return p.srv.URL }

func (p *proxy) set(f func(p *proxy)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	if p.failFirst > 0 {
		p.failFirst--
		p.failed++
		p.mu.Unlock()
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
		return
	}
	limit, bad, logsDown := p.limit, p.badBlock, p.logsDown
	p.mu.Unlock()

	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params []struct {
			FromBlock hexutil.Uint64 `json:"fromBlock"`
			ToBlock   hexutil.Uint64 `json:"toBlock"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) == nil && req.Method == "eth_getLogs" && logsDown {
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
		return
	}
	if json.Unmarshal(body, &req) == nil && req.Method == "eth_getLogs" && len(req.Params) == 1 {
		from, to := int64(req.Params[0].FromBlock), int64(req.Params[0].ToBlock)
		size := to - from + 1
		refuse := ""
		var code int
		switch {
		case limit > 0 && size > limit:
			code, refuse = -32005, "query returned more than 10000 results"
		case bad > 0 && from <= bad && bad <= to:
			code, refuse = -32000, fmt.Sprintf("internal error: receipts of block %d are corrupt", bad)
		}
		p.mu.Lock()
		p.calls = append(p.calls, logCall{size, refuse == ""})
		p.mu.Unlock()
		if refuse != "" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, req.ID, code, refuse)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	p.rp.ServeHTTP(w, r)
}

// logRecorder is a slog handler that keeps every message with its attributes.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	s := r.Message
	r.Attrs(func(a slog.Attr) bool { s += " " + a.String(); return true })
	l.mu.Lock()
	l.msgs = append(l.msgs, s)
	l.mu.Unlock()
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) find(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, m := range l.msgs {
		if strings.Contains(m, substr) {
			out = append(out, m)
		}
	}
	return out
}

func units(n int64, decimals int) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
