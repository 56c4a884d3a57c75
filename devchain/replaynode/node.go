// Package replaynode serves a recorded chain over the CometBFT 0.38 JSON-RPC API, so that the
// offline `make run` and indexer tests can read real chain data without a running node.
//
// A recording is a folder holding blocks.jsonl.gz and block_results.jsonl.gz (one full JSON-RPC
// reply per line, in height order), status.json, validators.json, genesis.json.gz and optionally
// abci_info.json, as produced for testdata/localnet/<chain>/.
//
// Served methods: health, status, block, block_results, header, block_by_hash, header_by_hash,
// blockchain, validators, genesis, genesis_chunked and, when recorded, abci_info (and abci_query
// for a Source that is a Querier). The node's latest
// height is the revealed height (see Options): heights above it and below the first recorded
// height fail with CometBFT's exact JSON-RPC errors. Replies are the recorded results byte for
// byte, except status (sync_info follows the revealed block), abci_info (last_block_height and
// last_block_app_hash follow it), validators (the one recorded set, taken at the recording's last
// height, is served for every height CometBFT would accept: first recorded height to revealed
// height + 1) and blockchain (block metas are built from the recorded blocks; block_size is the
// exact protobuf size CometBFT stores, computed with CometBFT's types). There is no websocket,
// and no tx, tx_search, commit, broadcast or consensus method.
package replaynode

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmttypes "github.com/cometbft/cometbft/types"
)

// File names inside a recording folder.
const (
	blocksFile     = "blocks.jsonl.gz"
	resultsFile    = "block_results.jsonl.gz"
	statusFile     = "status.json"
	validatorsFile = "validators.json"
	genesisFile    = "genesis.json.gz"
	abciInfoFile   = "abci_info.json"

	// maxLineBytes bounds one jsonl line (one block); blocks with stored wasm code are a few MB.
	maxLineBytes = 64 << 20
)

// Recording is a recorded chain loaded into memory; it is immutable after Load and safe for
// concurrent use.
type Recording struct {
	dir        string
	chainID    string
	first      int64
	blocks     []Block
	byHash     map[string]int // upper-case hex block hash -> index into blocks
	txCount    int
	status     json.RawMessage // result of /status
	validators json.RawMessage // result of /validators
	valList    []json.RawMessage
	genesis    json.RawMessage // compact GenesisDoc JSON, as served in result.genesis
	abciInfo   json.RawMessage // result of /abci_info, nil when not recorded
}

// Summarizer is implemented by a Source that can describe a height without
// building it (a generated chain, whose blocks are made in order): /status
// describes the tip and the first height with it. Summary sets Height and
// Time, and Hash and AppHash when the source knows them ("" otherwise).
type Summarizer interface {
	Summary(height int64) Block
}

// Querier is a Source that also answers abci_query: the application's
// gRPC queries at a height (a generated chain's state). A Node without
// one has no abci_query method.
type Querier interface {
	// ABCIQuery answers path with the request data at height (the state
	// after that block): the response value, or a *QueryError the node
	// reports as the response's code and log.
	ABCIQuery(path string, data []byte, height int64) ([]byte, error)
}

// QueryError is an application's refusal of a query, as ABCI reports it.
type QueryError struct {
	Code      uint32
	Codespace string
	Log       string
}

func (e *QueryError) Error() string { return fmt.Sprintf("%s code %d: %s", e.Codespace, e.Code, e.Log) }

// ErrUnknownQuery is the cosmos-sdk's answer to a query path no module
// serves.
func ErrUnknownQuery(path string) *QueryError {
	return &QueryError{Code: 6, Codespace: "sdk", Log: "unknown query path: " + path}
}

// Block is one height as a Node serves it: the /block and /block_results
// results, and what the other methods derive from them.
type Block struct {
	Height     int64
	Block      json.RawMessage // result of /block
	Results    json.RawMessage // result of /block_results
	Header     json.RawMessage
	Meta       json.RawMessage // BlockMeta JSON for /blockchain
	Hash       string          // block_id.hash, upper-case hex
	AppHash    string          // header.app_hash, upper-case hex
	Time       string          // header.time
	NumTxs     int
	ResAppHash string // block_results app_hash (base64), "" when null
}

// Source is the chain a Node serves: a Recording, or a generated chain
// (devchain/synthdydx). It must be safe for concurrent use.
type Source interface {
	// FirstHeight and LastHeight bound the heights Block serves.
	FirstHeight() int64
	LastHeight() int64
	// Block returns the block at a height in [FirstHeight, LastHeight].
	Block(height int64) (*Block, error)
	// BlockByHash returns the block with the upper-case hex hash, or false
	// when the source does not know it.
	BlockByHash(hash string) (*Block, bool)
	// Status is a /status result (its sync_info is rewritten per call).
	Status() json.RawMessage
	// Validators is the validator set served at every height.
	Validators() []json.RawMessage
	// Genesis is the compact GenesisDoc JSON served by /genesis.
	Genesis() json.RawMessage
	// ABCIInfo is an /abci_info result, nil when the source has none.
	ABCIInfo() json.RawMessage
}

// envelope is a recorded JSON-RPC reply.
type envelope struct {
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// Load reads the recording in dir, streaming the gzip jsonl files line by line, and checks that
// heights are contiguous and that blocks and block results match height for height.
func Load(dir string) (*Recording, error) {
	rec := &Recording{dir: dir, byHash: make(map[string]int)}
	if err := rec.loadBlocks(filepath.Join(dir, blocksFile)); err != nil {
		return nil, err
	}
	if err := rec.loadResults(filepath.Join(dir, resultsFile)); err != nil {
		return nil, err
	}
	if err := rec.loadStatus(filepath.Join(dir, statusFile)); err != nil {
		return nil, err
	}
	if err := rec.loadValidators(filepath.Join(dir, validatorsFile)); err != nil {
		return nil, err
	}
	if err := rec.loadGenesis(filepath.Join(dir, genesisFile)); err != nil {
		return nil, err
	}
	if err := rec.loadABCIInfo(filepath.Join(dir, abciInfoFile)); err != nil {
		return nil, err
	}
	return rec, nil
}

// ChainID returns the chain id found in the recorded block headers.
func (r *Recording) ChainID() string { return r.chainID }

// FirstHeight returns the lowest recorded height.
func (r *Recording) FirstHeight() int64 { return r.first }

// LastHeight returns the highest recorded height.
func (r *Recording) LastHeight() int64 { return r.first + int64(len(r.blocks)) - 1 }

// NumBlocks returns the number of recorded blocks.
func (r *Recording) NumBlocks() int { return len(r.blocks) }

// TxCount returns the number of transactions in all recorded blocks (entries of data.txs).
func (r *Recording) TxCount() int { return r.txCount }

// BlockTxCount returns the number of transactions in the block at height, and false when the
// height is not recorded.
func (r *Recording) BlockTxCount(height int64) (int, bool) {
	b, ok := r.block(height)
	if !ok {
		return 0, false
	}
	return b.NumTxs, true
}

// HasABCIInfo reports whether the recording includes an abci_info reply.
func (r *Recording) HasABCIInfo() bool { return r.abciInfo != nil }

func (r *Recording) block(height int64) (*Block, bool) {
	if len(r.blocks) == 0 || height < r.first || height > r.LastHeight() {
		return nil, false
	}
	return &r.blocks[height-r.first], true
}

// Block returns the recorded block at height.
func (r *Recording) Block(height int64) (*Block, error) {
	b, ok := r.block(height)
	if !ok {
		return nil, fmt.Errorf("height %d is not in the recording", height)
	}
	return b, nil
}

// BlockByHash returns the recorded block with the upper-case hex hash.
func (r *Recording) BlockByHash(hash string) (*Block, bool) {
	i, ok := r.byHash[hash]
	if !ok {
		return nil, false
	}
	return &r.blocks[i], true
}

// Status returns the recorded /status result.
func (r *Recording) Status() json.RawMessage { return r.status }

// Validators returns the recorded validator set.
func (r *Recording) Validators() []json.RawMessage { return r.valList }

// Genesis returns the recorded genesis as compact GenesisDoc JSON.
func (r *Recording) Genesis() json.RawMessage { return r.genesis }

// ABCIInfo returns the recorded /abci_info result, or nil.
func (r *Recording) ABCIInfo() json.RawMessage { return r.abciInfo }

var _ Source = (*Recording)(nil)

// forEachLine streams the gzip jsonl file at path and calls fn with the 1-based line number and
// the `result` of each JSON-RPC reply.
func forEachLine(path string, fn func(line int, result json.RawMessage) error) error {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("replaynode: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("replaynode: %s: %w", name, err)
	}
	defer zr.Close()
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<20), maxLineBytes)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			return fmt.Errorf("replaynode: %s:%d: empty line", name, line)
		}
		res, err := envelopeResult(b)
		if err != nil {
			return fmt.Errorf("replaynode: %s:%d: %w", name, line, err)
		}
		if err := fn(line, res); err != nil {
			return fmt.Errorf("replaynode: %s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("replaynode: %s: after line %d: %w", name, line, err)
	}
	if line == 0 {
		return fmt.Errorf("replaynode: %s: no lines", name)
	}
	return nil
}

// envelopeResult returns a copy of the result of the JSON-RPC reply b.
func envelopeResult(b []byte) (json.RawMessage, error) {
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("decode JSON-RPC reply: %w", err)
	}
	if len(env.Error) > 0 && !isNull(env.Error) {
		return nil, fmt.Errorf("recorded reply is a JSON-RPC error: %s", compactString(env.Error))
	}
	if len(env.Result) == 0 || isNull(env.Result) {
		return nil, errors.New("recorded reply has no result")
	}
	return env.Result, nil
}

func (r *Recording) loadBlocks(path string) error {
	return forEachLine(path, func(line int, res json.RawMessage) error {
		var v struct {
			BlockID struct {
				Hash string `json:"hash"`
			} `json:"block_id"`
			Block *struct {
				Header json.RawMessage `json:"header"`
				Data   struct {
					Txs []json.RawMessage `json:"txs"`
				} `json:"data"`
			} `json:"block"`
		}
		if err := json.Unmarshal(res, &v); err != nil {
			return fmt.Errorf("decode block: %w", err)
		}
		if v.Block == nil || len(v.Block.Header) == 0 {
			return errors.New("block has no header")
		}
		var h struct {
			ChainID string `json:"chain_id"`
			Height  string `json:"height"`
			Time    string `json:"time"`
			AppHash string `json:"app_hash"`
		}
		if err := json.Unmarshal(v.Block.Header, &h); err != nil {
			return fmt.Errorf("decode block header: %w", err)
		}
		height, err := strconv.ParseInt(h.Height, 10, 64)
		if err != nil || height <= 0 {
			return fmt.Errorf("bad header height %q", h.Height)
		}
		if len(r.blocks) == 0 {
			r.first, r.chainID = height, h.ChainID
		} else if want := r.LastHeight() + 1; height != want {
			return fmt.Errorf("height %d, want %d (heights must be contiguous)", height, want)
		}
		if h.ChainID != r.chainID {
			return fmt.Errorf("chain id %q differs from %q of the first block", h.ChainID, r.chainID)
		}
		if _, err := hex.DecodeString(v.BlockID.Hash); err != nil || v.BlockID.Hash == "" {
			return fmt.Errorf("bad block_id.hash %q", v.BlockID.Hash)
		}
		size, err := blockSize(res)
		if err != nil {
			return err
		}
		header := compact(v.Block.Header)
		blockID, err := rawField(res, "block_id")
		if err != nil {
			return err
		}
		meta, err := blockMetaJSON(blockID, size, header, len(v.Block.Data.Txs))
		if err != nil {
			return err
		}
		hash := strings.ToUpper(v.BlockID.Hash)
		if _, dup := r.byHash[hash]; dup {
			return fmt.Errorf("duplicate block hash %s", hash)
		}
		r.byHash[hash] = len(r.blocks)
		r.txCount += len(v.Block.Data.Txs)
		r.blocks = append(r.blocks, Block{
			Height:  height,
			Block:   res,
			Header:  header,
			Meta:    meta,
			Hash:    hash,
			AppHash: strings.ToUpper(h.AppHash),
			Time:    h.Time,
			NumTxs:  len(v.Block.Data.Txs),
		})
		return nil
	})
}

// blockSize returns the size of the block's protobuf encoding, which is what CometBFT stores as
// BlockMeta.BlockSize; the recorded JSON is decoded with CometBFT's own types to compute it.
func blockSize(blockResult json.RawMessage) (int, error) {
	var res struct {
		Block *cmttypes.Block `json:"block"`
	}
	if err := cmtjson.Unmarshal(blockResult, &res); err != nil {
		return 0, fmt.Errorf("decode block with CometBFT types: %w", err)
	}
	if res.Block == nil {
		return 0, errors.New("block is null")
	}
	pb, err := res.Block.ToProto()
	if err != nil {
		return 0, fmt.Errorf("encode block to protobuf: %w", err)
	}
	return pb.Size(), nil
}

// blockMetaJSON renders a CometBFT BlockMeta (block_id, block_size, header, num_txs).
func blockMetaJSON(blockID json.RawMessage, size int, header json.RawMessage, numTxs int) (json.RawMessage, error) {
	o := newObject()
	o.set("block_id", blockID)
	o.set("block_size", quotedInt(int64(size)))
	o.set("header", header)
	o.set("num_txs", quotedInt(int64(numTxs)))
	return o.marshal()
}

func (r *Recording) loadResults(path string) error {
	n := 0
	err := forEachLine(path, func(line int, res json.RawMessage) error {
		var v struct {
			Height     string            `json:"height"`
			TxsResults []json.RawMessage `json:"txs_results"`
			AppHash    *string           `json:"app_hash"`
		}
		if err := json.Unmarshal(res, &v); err != nil {
			return fmt.Errorf("decode block_results: %w", err)
		}
		if n >= len(r.blocks) {
			return fmt.Errorf("more block_results lines than the %d blocks in %s", len(r.blocks), blocksFile)
		}
		b := &r.blocks[n]
		height, err := strconv.ParseInt(v.Height, 10, 64)
		if err != nil || height != b.Height {
			return fmt.Errorf("block_results height %q, want %d (line %d of %s)", v.Height, b.Height, n+1, blocksFile)
		}
		if len(v.TxsResults) != b.NumTxs {
			return fmt.Errorf("height %d: %d txs_results for %d txs in the block", height, len(v.TxsResults), b.NumTxs)
		}
		if v.AppHash != nil {
			b.ResAppHash = *v.AppHash
		}
		b.Results = res
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n != len(r.blocks) {
		return fmt.Errorf("replaynode: %s: %d lines for %d blocks in %s", resultsFile, n, len(r.blocks), blocksFile)
	}
	return nil
}

// readEnvelopeFile reads a JSON-RPC reply file (optionally gzip) and returns its result.
func readEnvelopeFile(path string) (json.RawMessage, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	res, err := envelopeResult(b)
	if err != nil {
		return nil, fmt.Errorf("replaynode: %s: %w", filepath.Base(path), err)
	}
	return compact(res), nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replaynode: %w", err)
	}
	defer f.Close()
	var rd io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("replaynode: %s: %w", filepath.Base(path), err)
		}
		defer zr.Close()
		rd = zr
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("replaynode: %s: %w", filepath.Base(path), err)
	}
	return b, nil
}

func (r *Recording) loadStatus(path string) error {
	res, err := readEnvelopeFile(path)
	if err != nil {
		return err
	}
	var v struct {
		NodeInfo struct {
			Network string `json:"network"`
		} `json:"node_info"`
		SyncInfo json.RawMessage `json:"sync_info"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return fmt.Errorf("replaynode: %s: decode status: %w", statusFile, err)
	}
	if len(v.SyncInfo) == 0 || v.SyncInfo[0] != '{' {
		return fmt.Errorf("replaynode: %s: status has no sync_info object", statusFile)
	}
	if v.NodeInfo.Network != r.chainID {
		return fmt.Errorf("replaynode: %s: node_info.network %q, but the blocks are for chain %q", statusFile, v.NodeInfo.Network, r.chainID)
	}
	r.status = res
	return nil
}

func (r *Recording) loadValidators(path string) error {
	res, err := readEnvelopeFile(path)
	if err != nil {
		return err
	}
	var v struct {
		Validators []json.RawMessage `json:"validators"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return fmt.Errorf("replaynode: %s: decode validators: %w", validatorsFile, err)
	}
	if len(v.Validators) == 0 {
		return fmt.Errorf("replaynode: %s: no validators", validatorsFile)
	}
	r.validators, r.valList = res, v.Validators
	return nil
}

// loadGenesis accepts the recorded /genesis reply, a bare CometBFT GenesisDoc, or a Cosmos SDK
// AppGenesis file (the dYdX recording stores the file the node started from), which is converted to
// the GenesisDoc shape the node serves (see appGenesisToDoc).
func (r *Recording) loadGenesis(path string) error {
	b, err := readFile(path)
	if err != nil {
		return err
	}
	top, err := parseObject(b)
	if err != nil {
		return fmt.Errorf("replaynode: %s: %w", genesisFile, err)
	}
	var doc json.RawMessage
	switch {
	case top.has("result") || top.has("jsonrpc"):
		res, err := envelopeResult(b)
		if err != nil {
			return fmt.Errorf("replaynode: %s: %w", genesisFile, err)
		}
		var v struct {
			Genesis json.RawMessage `json:"genesis"`
		}
		if err := json.Unmarshal(res, &v); err != nil || len(v.Genesis) == 0 || isNull(v.Genesis) {
			return fmt.Errorf("replaynode: %s: reply has no result.genesis", genesisFile)
		}
		doc = compact(v.Genesis)
	case top.has("consensus") || top.has("app_name"):
		doc, err = appGenesisToDoc(top)
		if err != nil {
			return fmt.Errorf("replaynode: %s: %w", genesisFile, err)
		}
	default:
		doc = compact(b)
	}
	var g struct {
		ChainID string `json:"chain_id"`
	}
	if err := json.Unmarshal(doc, &g); err != nil {
		return fmt.Errorf("replaynode: %s: decode genesis: %w", genesisFile, err)
	}
	if g.ChainID != r.chainID {
		return fmt.Errorf("replaynode: %s: chain_id %q, but the blocks are for chain %q", genesisFile, g.ChainID, r.chainID)
	}
	r.genesis = doc
	return nil
}

// appGenesisToDoc converts a Cosmos SDK AppGenesis to the CometBFT GenesisDoc JSON that a node
// built on it serves at /genesis (what AppGenesis.ToGenesisDoc produces, encoded by CometBFT).
func appGenesisToDoc(ag *object) (json.RawMessage, error) {
	var initialHeight int64 = 1
	if v, ok := ag.get("initial_height"); ok && !isNull(v) {
		var n json.Number
		if err := json.Unmarshal(unquote(v), &n); err != nil {
			return nil, fmt.Errorf("initial_height: %w", err)
		}
		h, err := n.Int64()
		if err != nil {
			return nil, fmt.Errorf("initial_height: %w", err)
		}
		initialHeight = h
	}
	var consensus struct {
		Params     json.RawMessage   `json:"params"`
		Validators []json.RawMessage `json:"validators"`
	}
	if v, ok := ag.get("consensus"); ok && !isNull(v) {
		if err := json.Unmarshal(v, &consensus); err != nil {
			return nil, fmt.Errorf("consensus: %w", err)
		}
	}
	doc := newObject()
	for _, k := range []string{"genesis_time", "chain_id"} {
		v, ok := ag.get(k)
		if !ok {
			return nil, fmt.Errorf("app genesis has no %s", k)
		}
		doc.set(k, v)
	}
	doc.set("initial_height", quotedInt(initialHeight))
	if len(consensus.Params) > 0 && !isNull(consensus.Params) {
		doc.set("consensus_params", consensus.Params)
	}
	if len(consensus.Validators) > 0 {
		vals, err := json.Marshal(consensus.Validators)
		if err != nil {
			return nil, fmt.Errorf("consensus.validators: %w", err)
		}
		doc.set("validators", vals)
	}
	appHash := json.RawMessage(`""`)
	if v, ok := ag.get("app_hash"); ok && !isNull(v) {
		appHash = v
	}
	doc.set("app_hash", appHash)
	if v, ok := ag.get("app_state"); ok && !isNull(v) {
		doc.set("app_state", v)
	}
	return doc.marshal()
}

func (r *Recording) loadABCIInfo(path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	res, err := readEnvelopeFile(path)
	if err != nil {
		return err
	}
	o, err := parseObject(res)
	if err != nil {
		return fmt.Errorf("replaynode: %s: %w", abciInfoFile, err)
	}
	if v, ok := o.get("response"); !ok || len(v) == 0 || v[0] != '{' {
		return fmt.Errorf("replaynode: %s: abci_info has no response object", abciInfoFile)
	}
	r.abciInfo = res
	return nil
}

// Options controls how a Node reveals the recording.
type Options struct {
	// BlockTime is the interval at which Run reveals one more height; 0 (or less) means the
	// revealed height never changes.
	BlockTime time.Duration
	// StartHeight is the height revealed at start, clamped to the recorded range; 0 means the
	// last recorded height when BlockTime is 0 and the first recorded height otherwise.
	StartHeight int64
	// LatestStoreReads answers a read of a store's subspace
	// ("/store/<key>/subspace") from the revealed height's state whatever
	// the height asked, as cosmos-sdk ≤ 0.53 nodes (real Osmosis nodes)
	// do (cosmos/cosmos-sdk#25914).
	LatestStoreReads bool
}

// Node serves a Recording over HTTP as a CometBFT 0.38 JSON-RPC node whose latest height is the
// currently revealed height.
type Node struct {
	src           Source
	blockTime     time.Duration
	tip           atomic.Int64
	latestStores  bool
	running       atomic.Bool
	genesisChunks []string
	methods       map[string]method
}

// genesisChunkSize is CometBFT's chunk size for genesis_chunked.
const genesisChunkSize = 16 * 1024 * 1024

// New returns a node for src (which must be non-nil) that reveals heights as opt says.
func New(src Source, opt Options) *Node {
	n := &Node{src: src, blockTime: opt.BlockTime, latestStores: opt.LatestStoreReads}
	start := opt.StartHeight
	switch {
	case start == 0 && opt.BlockTime <= 0:
		start = src.LastHeight()
	case start < src.FirstHeight():
		start = src.FirstHeight()
	case start > src.LastHeight():
		start = src.LastHeight()
	}
	n.tip.Store(start)
	genesis := src.Genesis()
	for i := 0; i < len(genesis); i += genesisChunkSize {
		end := min(i+genesisChunkSize, len(genesis))
		n.genesisChunks = append(n.genesisChunks, base64.StdEncoding.EncodeToString(genesis[i:end]))
	}
	n.methods = n.routes()
	return n
}

// Height returns the currently revealed (latest) height.
func (n *Node) Height() int64 { return n.tip.Load() }

// Run reveals one more height every BlockTime until the last recorded height and returns nil when
// ctx is done; it returns an error at once if another Run of the same node is in progress.
func (n *Node) Run(ctx context.Context) error {
	if !n.running.CompareAndSwap(false, true) {
		return errors.New("replaynode: Run is already in progress")
	}
	defer n.running.Store(false)
	if n.blockTime <= 0 || n.tip.Load() >= n.src.LastHeight() {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(n.blockTime)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if n.tip.Add(1) >= n.src.LastHeight() {
				t.Stop()
				<-ctx.Done()
				return nil
			}
		}
	}
}

// rawField returns the compact JSON value of key in the object b.
func rawField(b json.RawMessage, key string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	v, ok := m[key]
	if !ok || isNull(v) {
		return nil, fmt.Errorf("no %s", key)
	}
	return compact(v), nil
}
