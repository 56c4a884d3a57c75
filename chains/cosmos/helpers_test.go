package cosmos

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/chainlens/chainlens/chains"
)

// testdata is the project's testdata folder (relative to this package).
const testdata = "../../testdata"

var (
	testRegistryOnce sync.Once
	testRegistry     *Registry
)

// registry returns one shared Registry for the tests (it is immutable).
func registry() *Registry {
	testRegistryOnce.Do(func() { testRegistry = NewRegistry() })
	return testRegistry
}

// rpcFile reads a recorded /block or /block_results file and returns its
// `result` object: files are either a JSON-RPC envelope or result only.
// An envelope with an error returns the error's JSON and ok false.
func rpcFile(t testing.TB, rel string) (result json.RawMessage, ok bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, rel))
	if err != nil {
		t.Fatal(err)
	}
	return unwrap(t, b)
}

func unwrap(t testing.TB, b []byte) (json.RawMessage, bool) {
	t.Helper()
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	if env.JSONRPC == "" { // result only
		return b, true
	}
	if len(env.Error) > 0 {
		return env.Error, false
	}
	return env.Result, true
}

// localnet is one recorded localnet: the `result` of every /block and
// /block_results line, in height order from height 1.
type localnet struct {
	name    string
	chainID string
	prefix  string
	blocks  []json.RawMessage
	results []json.RawMessage
}

var (
	localnetMu    sync.Mutex
	localnetCache = map[string]*localnet{}
)

// loadLocalnet streams testdata/localnet/<name>/{blocks,block_results}.jsonl.gz.
func loadLocalnet(t testing.TB, name, chainID, prefix string) *localnet {
	t.Helper()
	localnetMu.Lock()
	defer localnetMu.Unlock()
	if ln, ok := localnetCache[name]; ok {
		return ln
	}
	ln := &localnet{name: name, chainID: chainID, prefix: prefix}
	dir := filepath.Join(testdata, "localnet", name)
	ln.blocks = readJSONL(t, filepath.Join(dir, "blocks.jsonl.gz"))
	ln.results = readJSONL(t, filepath.Join(dir, "block_results.jsonl.gz"))
	if len(ln.blocks) != len(ln.results) {
		t.Fatalf("%s: %d blocks but %d block_results lines", name, len(ln.blocks), len(ln.results))
	}
	localnetCache[name] = ln
	return ln
}

func readJSONL(t testing.TB, path string) []json.RawMessage {
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
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out []json.RawMessage
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		res, ok := unwrap(t, line)
		if !ok {
			t.Fatalf("%s line %d: error response %s", path, len(out)+1, res)
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// raw returns the RawBlock of height h (1-based line number).
func (ln *localnet) raw(h int64) chains.RawBlock {
	return chains.RawBlock{ChainID: ln.chainID, Height: h, Block: ln.blocks[h-1], Results: ln.results[h-1]}
}

// localnetSets names the shipped descriptor set of each localnet's chain.
var localnetSets = map[string]string{"osmosis": "osmosis", "dydx": "dydx", "neutron": "neutron", "xion": "xion", "cosmoshub": "gaia"}

var (
	chainRegistriesMu sync.Mutex
	chainRegistries   = map[string]*Registry{}
)

// chainRegistry returns one shared registry of a chain's shipped set.
func chainRegistry(set string) *Registry {
	if set == "" {
		return registry()
	}
	chainRegistriesMu.Lock()
	defer chainRegistriesMu.Unlock()
	r, ok := chainRegistries[set]
	if !ok {
		r = NewRegistry(set)
		chainRegistries[set] = r
	}
	return r
}

// opts returns the decode options of the localnet: its chain's descriptors.
func (ln *localnet) opts() Options {
	return Options{Bech32Prefix: ln.prefix, Registry: chainRegistry(localnetSets[ln.name])}
}

// tally counts what a run of decoded heights holds.
type tally struct {
	blocks, txs, failed, undecodable, unknownMsgs int
	blocksWithTxs                                 int
	txEventTypes                                  map[string]int
	blockEventTypes                               map[string]int // "type" or "type/mode"
	actions                                       map[string]int // message.action values in tx events
	msgTypes                                      map[string]int // decoded message type URLs
	knownMsgTypes                                 map[string]int // ... with JSON
	codes                                         map[string]int // "code/codespace" of failed txs
	byHash                                        map[string]*chains.Tx
	blocksByHeight                                map[int64]*chains.Block
}

func newTally() *tally {
	return &tally{
		txEventTypes: map[string]int{}, blockEventTypes: map[string]int{}, actions: map[string]int{},
		msgTypes: map[string]int{}, knownMsgTypes: map[string]int{}, codes: map[string]int{},
		byHash: map[string]*chains.Tx{}, blocksByHeight: map[int64]*chains.Block{},
	}
}

func (ta *tally) add(b *chains.Block) {
	ta.blocks++
	ta.blocksByHeight[b.Height] = b
	ta.undecodable += b.Stats.UndecodableTxs
	ta.unknownMsgs += b.Stats.UnknownMessages
	if len(b.Txs) > 0 {
		ta.blocksWithTxs++
	}
	for _, ev := range b.Events {
		k := ev.Type
		if ev.Mode != "" {
			k += "/" + ev.Mode
		}
		ta.blockEventTypes[k]++
	}
	for i := range b.Txs {
		tx := &b.Txs[i]
		ta.txs++
		ta.byHash[tx.Hash] = tx
		if !tx.Succeeded() {
			ta.failed++
			ta.codes[fmt.Sprintf("%d/%s", tx.Code, tx.Codespace)]++
		}
		for _, ev := range tx.Events {
			ta.txEventTypes[ev.Type]++
			if ev.Type == "message" {
				if a, ok := ev.Get("action"); ok {
					ta.actions[a]++
				}
			}
		}
		for _, m := range tx.Messages {
			ta.msgTypes[m.TypeURL]++
			if m.JSON != nil {
				ta.knownMsgTypes[m.TypeURL]++
			}
		}
	}
}

// decodeAll decodes every height of a localnet and fails the test on the
// first error.
func (ln *localnet) decodeAll(t testing.TB) *tally {
	t.Helper()
	ta := newTally()
	for h := int64(1); h <= int64(len(ln.blocks)); h++ {
		b, err := DecodeBlock(ln.raw(h), ln.opts())
		if err != nil {
			t.Fatalf("%s: %v", ln.name, err)
		}
		ta.add(b)
	}
	return ta
}

// assertCounts compares a count map with the expected one, exactly.
func assertCounts(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s[%q] = %d, want %d", what, k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s[%q] = %d, not expected", what, k, g)
		}
	}
}
