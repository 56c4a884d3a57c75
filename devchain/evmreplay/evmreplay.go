// Package evmreplay serves a recorded EVM chain over the Ethereum JSON-RPC
// methods an indexer reads, so the offline `make run` and tests can index
// real recorded blocks and logs without a running node.
//
// A recording is a folder holding chain.json (the node's replies to
// eth_chainId, net_version and web3_clientVersion), blocks.jsonl.gz (one
// eth_getBlockByNumber(N, false) reply per line, N = 0.. in order) and
// logs.jsonl.gz (every log of those blocks, in order), as in
// testdata/evm/recorded (a go-ethereum --dev recording).
//
// Served methods: eth_chainId, net_version, web3_clientVersion,
// eth_blockNumber, eth_getBlockByNumber and eth_getLogs (by block range,
// address and positional topics), single or batched. The head is the
// revealed height (see Options); blocks above it are null and log ranges
// beyond it fail with geth's own errors. Replies are the recorded results,
// except that with Options.Rebase every block and log timestamp is moved
// by the same amount so that the start block is "now" (the chain looks
// live). There is no eth_call, receipt, transaction or subscription method.
package evmreplay

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// Source is a chain a Node serves: a Recording, or a generated chain
// (devchain/synthevm).
type Source interface {
	// Info is the result of eth_chainId, net_version or web3_clientVersion.
	Info(method string) (json.RawMessage, bool)
	// LastHeight is the highest block.
	LastHeight() int64
	// Block is the result of eth_getBlockByNumber(h, false), h <= LastHeight.
	Block(h int64) (json.RawMessage, error)
	// Time is block h's timestamp.
	Time(h int64) (uint64, error)
	// Logs calls fn with each log of blocks from..to, in (block, log
	// index) order, until fn returns false.
	Logs(from, to int64, fn func(l *Log) bool) error
}

// Log is one log of a Source: its eth_getLogs form, and what filters read.
type Log struct {
	Raw     map[string]json.RawMessage
	Block   uint64
	Address common.Address
	Topics  []common.Hash
}

// Recording is a recorded EVM chain in memory; immutable after Load.
type Recording struct {
	chain  map[string]json.RawMessage // method → recorded result
	blocks []json.RawMessage          // result of eth_getBlockByNumber(N, false), index N
	times  []uint64                   // block timestamps
	logs   []Log                      // in (block, log index) order
}

// Info is a recorded result of eth_chainId, net_version or web3_clientVersion.
func (r *Recording) Info(method string) (json.RawMessage, bool) {
	res, ok := r.chain[method]
	return res, ok
}

// Block is the recorded block h.
func (r *Recording) Block(h int64) (json.RawMessage, error) { return r.blocks[h], nil }

// Time is block h's recorded timestamp.
func (r *Recording) Time(h int64) (uint64, error) { return r.times[h], nil }

// Logs visits the recorded logs of blocks from..to.
func (r *Recording) Logs(from, to int64, fn func(l *Log) bool) error {
	lo, _ := slices.BinarySearchFunc(r.logs, uint64(from), func(l Log, b uint64) int { return compare(l.Block, b) })
	for i := lo; i < len(r.logs) && r.logs[i].Block <= uint64(to); i++ {
		if !fn(&r.logs[i]) {
			break
		}
	}
	return nil
}

// Load reads a recording folder.
func Load(dir string) (*Recording, error) {
	r := &Recording{chain: map[string]json.RawMessage{}}
	b, err := os.ReadFile(filepath.Join(dir, "chain.json"))
	if err != nil {
		return nil, fmt.Errorf("evm recording: %w", err)
	}
	var replies map[string]struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &replies); err != nil {
		return nil, fmt.Errorf("evm recording: chain.json: %w", err)
	}
	for m, rep := range replies {
		r.chain[m] = rep.Result
	}
	if err := eachLine(filepath.Join(dir, "blocks.jsonl.gz"), func(line []byte) error {
		var rep struct {
			ID     uint64          `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		var hdr struct {
			Number    hexutil.Uint64 `json:"number"`
			Timestamp hexutil.Uint64 `json:"timestamp"`
		}
		if err := json.Unmarshal(line, &rep); err != nil {
			return err
		}
		if err := json.Unmarshal(rep.Result, &hdr); err != nil {
			return err
		}
		if uint64(hdr.Number) != uint64(len(r.blocks)) {
			return fmt.Errorf("block %d where %d was expected (blocks must start at 0, in order)", hdr.Number, len(r.blocks))
		}
		r.blocks = append(r.blocks, rep.Result)
		r.times = append(r.times, uint64(hdr.Timestamp))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("evm recording: blocks: %w", err)
	}
	if len(r.blocks) == 0 {
		return nil, errors.New("evm recording: no blocks")
	}
	if err := eachLine(filepath.Join(dir, "logs.jsonl.gz"), func(line []byte) error {
		var l Log
		var parsed struct {
			Address     common.Address `json:"address"`
			Topics      []common.Hash  `json:"topics"`
			BlockNumber hexutil.Uint64 `json:"blockNumber"`
		}
		if err := json.Unmarshal(line, &l.Raw); err != nil {
			return err
		}
		if err := json.Unmarshal(line, &parsed); err != nil {
			return err
		}
		l.Block, l.Address, l.Topics = uint64(parsed.BlockNumber), parsed.Address, parsed.Topics
		if l.Block >= uint64(len(r.blocks)) {
			return fmt.Errorf("log of block %d beyond the last block %d", l.Block, len(r.blocks)-1)
		}
		r.logs = append(r.logs, l)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("evm recording: logs: %w", err)
	}
	return r, nil
}

func eachLine(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(sc.Bytes()); err != nil {
			return fmt.Errorf("%s line %d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// LastHeight is the last recorded block.
func (r *Recording) LastHeight() int64 { return int64(len(r.blocks) - 1) }

// Options shape how a Node replays.
type Options struct {
	// StartHeight is the head when the node starts; 0 = the last block.
	StartHeight int64
	// BlockTime reveals one more block per tick up to the last; 0 = never.
	BlockTime time.Duration
	// Rebase moves every timestamp so the start block is at Now.
	Rebase bool
	// Now is the wall clock for Rebase; default time.Now.
	Now func() time.Time
}

// Node serves a Source.
type Node struct {
	rec   Source
	opt   Options
	head  atomic.Int64
	shift int64 // seconds added to every timestamp
}

// New returns a node at opt.StartHeight.
func New(rec Source, opt Options) *Node {
	n := &Node{rec: rec, opt: opt}
	start := opt.StartHeight
	if start <= 0 || start > rec.LastHeight() {
		start = rec.LastHeight()
	}
	n.head.Store(start)
	if opt.Rebase {
		now := time.Now
		if opt.Now != nil {
			now = opt.Now
		}
		t, err := rec.Time(start)
		if err == nil {
			n.shift = now().Unix() - int64(t)
		}
	}
	return n
}

// Head is the revealed height.
func (n *Node) Head() int64 { return n.head.Load() }

// Run reveals one block per BlockTime until the last or ctx ends.
func (n *Node) Run(ctx context.Context) error {
	if n.opt.BlockTime <= 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(n.opt.BlockTime)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if h := n.head.Load(); h < n.rec.LastHeight() {
				n.head.Store(h + 1)
			}
		}
	}
}

type request struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// Handler serves JSON-RPC over HTTP POST, single or batched.
func (n *Node) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "JSON-RPC over POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 5<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		trimmed := strings.TrimSpace(string(body))
		if strings.HasPrefix(trimmed, "[") {
			var reqs []request
			if err := json.Unmarshal(body, &reqs); err != nil {
				_ = json.NewEncoder(w).Encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{-32700, "parse error"}})
				return
			}
			out := make([]response, len(reqs))
			for i, q := range reqs {
				out[i] = n.serve(q)
			}
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		var q request
		if err := json.Unmarshal(body, &q); err != nil {
			_ = json.NewEncoder(w).Encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{-32700, "parse error"}})
			return
		}
		_ = json.NewEncoder(w).Encode(n.serve(q))
	})
}

// nullResult marks a JSON null result (omitempty would drop a nil any).
var nullResult = json.RawMessage("null")

func (n *Node) serve(q request) response {
	resp := response{JSONRPC: "2.0", ID: q.ID}
	fail := func(code int, format string, args ...any) response {
		resp.Error = &rpcError{code, fmt.Sprintf(format, args...)}
		return resp
	}
	switch q.Method {
	case "eth_chainId", "net_version", "web3_clientVersion":
		res, ok := n.rec.Info(q.Method)
		if !ok {
			return fail(-32601, "the method %s does not exist/is not available", q.Method)
		}
		resp.Result = res
	case "eth_blockNumber":
		resp.Result = hexutil.Uint64(n.Head())
	case "eth_getBlockByNumber":
		if len(q.Params) < 1 {
			return fail(-32602, "missing value for required argument 0")
		}
		if len(q.Params) > 1 && string(q.Params[1]) == "true" {
			return fail(-32602, "full transaction objects are not recorded")
		}
		h, err := n.blockArg(q.Params[0])
		if err != nil {
			return fail(-32602, "invalid argument 0: %v", err)
		}
		if h > n.Head() {
			resp.Result = nullResult
			return resp
		}
		b, err := n.block(h)
		if err != nil {
			return fail(-32000, "%v", err)
		}
		resp.Result = b
	case "eth_getLogs":
		if len(q.Params) != 1 {
			return fail(-32602, "missing value for required argument 0")
		}
		logs, err := n.getLogs(q.Params[0])
		if err != nil {
			return fail(-32602, "%v", err)
		}
		resp.Result = logs
	default:
		return fail(-32601, "the method %s does not exist/is not available", q.Method)
	}
	return resp
}

// blockArg parses a block number or tag.
func (n *Node) blockArg(raw json.RawMessage) (int64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, errors.New("invalid hex string")
	}
	switch s {
	case "latest", "safe", "finalized", "pending":
		return n.Head(), nil
	case "earliest":
		return 0, nil
	}
	v, err := hexutil.DecodeUint64(s)
	if err != nil {
		return 0, errors.New("invalid hex string")
	}
	return int64(min(v, 1<<62)), nil
}

func (n *Node) block(h int64) (json.RawMessage, error) {
	raw, err := n.rec.Block(h)
	if err != nil || n.shift == 0 {
		return raw, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return raw, nil
	}
	t, err := n.rec.Time(h)
	if err != nil {
		return nil, err
	}
	m["timestamp"] = hexQuantity(uint64(int64(t) + n.shift))
	out, err := json.Marshal(m)
	if err != nil {
		return raw, nil
	}
	return out, nil
}

func hexQuantity(v uint64) json.RawMessage {
	return json.RawMessage(strconv.Quote(hexutil.EncodeUint64(v)))
}

func (n *Node) getLogs(raw json.RawMessage) ([]map[string]json.RawMessage, error) {
	var f struct {
		FromBlock json.RawMessage `json:"fromBlock"`
		ToBlock   json.RawMessage `json:"toBlock"`
		Address   json.RawMessage `json:"address"`
		Topics    []json.RawMessage
		BlockHash *common.Hash `json:"blockHash"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("invalid argument 0: %v", err)
	}
	if f.BlockHash != nil {
		return nil, errors.New("blockHash filters are not served by this replay")
	}
	from, to := n.Head(), n.Head()
	var err error
	if len(f.FromBlock) > 0 {
		if from, err = n.blockArg(f.FromBlock); err != nil {
			return nil, fmt.Errorf("invalid argument 0: %v", err)
		}
	}
	if len(f.ToBlock) > 0 {
		if to, err = n.blockArg(f.ToBlock); err != nil {
			return nil, fmt.Errorf("invalid argument 0: %v", err)
		}
	}
	if from > n.Head() || to > n.Head() {
		return nil, errors.New("block range extends beyond current head block")
	}
	if from > to {
		return nil, errors.New("invalid block range params")
	}
	addrs, err := addressFilter(f.Address)
	if err != nil {
		return nil, fmt.Errorf("invalid argument 0: %v", err)
	}
	topics := make([][]common.Hash, len(f.Topics))
	for i, t := range f.Topics {
		if topics[i], err = topicFilter(t); err != nil {
			return nil, fmt.Errorf("invalid argument 0: %v", err)
		}
	}
	out := []map[string]json.RawMessage{}
	var timeErr error
	err = n.rec.Logs(from, to, func(l *Log) bool {
		if len(addrs) > 0 && !slices.Contains(addrs, l.Address) {
			return true
		}
		if !matchTopics(l.Topics, topics) {
			return true
		}
		if n.shift == 0 {
			out = append(out, l.Raw)
			return true
		}
		m := make(map[string]json.RawMessage, len(l.Raw))
		for k, v := range l.Raw {
			m[k] = v
		}
		if _, ok := m["blockTimestamp"]; ok {
			t, err := n.rec.Time(int64(l.Block))
			if err != nil {
				timeErr = err
				return false
			}
			m["blockTimestamp"] = hexQuantity(uint64(int64(t) + n.shift))
		}
		out = append(out, m)
		return true
	})
	if err != nil {
		return nil, err
	}
	if timeErr != nil {
		return nil, timeErr
	}
	return out, nil
}

func compare(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func addressFilter(raw json.RawMessage) ([]common.Address, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one common.Address
	if err := json.Unmarshal(raw, &one); err == nil {
		return []common.Address{one}, nil
	}
	var many []common.Address
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("address: %w", err)
	}
	return many, nil
}

// topicFilter is one position: nil = any.
func topicFilter(raw json.RawMessage) ([]common.Hash, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one common.Hash
	if err := json.Unmarshal(raw, &one); err == nil {
		return []common.Hash{one}, nil
	}
	var many []common.Hash
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("topics: %w", err)
	}
	return many, nil
}

func matchTopics(have []common.Hash, want [][]common.Hash) bool {
	if len(want) > len(have) {
		return false
	}
	for i, alts := range want {
		if len(alts) > 0 && !slices.Contains(alts, have[i]) {
			return false
		}
	}
	return true
}
