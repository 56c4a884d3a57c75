package synthdydx

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cometbft/cometbft/crypto/ed25519"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	"github.com/cometbft/cometbft/p2p"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"

	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/devchain/replaynode"
)

//go:embed mainnet-genesis.json.gz
var mainnetGenesisGz []byte

// Chain is a generated chain served as a replaynode.Source. Blocks are
// generated in order as they are read (an indexer reads forward, a few
// hundred heights ahead at most); the last Window heights are kept, and
// reading further back regenerates from genesis.
type Chain struct {
	p          Profile
	genesis    json.RawMessage
	status     json.RawMessage
	validators []json.RawMessage
	start      *state // the state at genesis, copied to regenerate
	reg        *protoset.Registry

	mu     sync.Mutex
	g      *generator
	kept   map[int64]*replaynode.Block
	byHash map[string]int64
	first  *replaynode.Block // height 1, kept for /status
}

var (
	_ replaynode.Source     = (*Chain)(nil)
	_ replaynode.Summarizer = (*Chain)(nil)
)

// New builds the chain's genesis and validator set; blocks are generated
// when read.
func New(p Profile) (*Chain, error) {
	if p.Days < 1 || p.BlockTime <= 0 || p.Window < 1 || p.Validators < 1 || p.Traders < 1 || p.Makers < 1 {
		return nil, fmt.Errorf("synthdydx: profile needs days, block time, window, validators, traders and makers")
	}
	gen, err := readGenesis()
	if err != nil {
		return nil, err
	}
	st, err := newState(p, gen)
	if err != nil {
		return nil, err
	}
	reg, err := protoset.NewShipped("cosmos", "dydx")
	if err != nil {
		return nil, fmt.Errorf("synthdydx: %w", err)
	}
	c := &Chain{p: p, start: st, reg: reg}
	gen["genesis_time"] = p.Genesis.UTC().Format(time.RFC3339Nano)
	gen["chain_id"] = p.ChainID
	gen["initial_height"] = "1"
	if c.genesis, err = st.genesisDoc(gen); err != nil {
		return nil, err
	}
	for _, v := range st.vals.Validators {
		b, err := cmtjson.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("synthdydx: encode validator: %w", err)
		}
		c.validators = append(c.validators, b)
	}
	if c.status, err = c.statusJSON(); err != nil {
		return nil, err
	}
	c.reset()
	return c, nil
}

// readGenesis decodes the embedded mainnet genesis, numbers kept as written.
func readGenesis() (map[string]any, error) {
	zr, err := gzip.NewReader(bytes.NewReader(mainnetGenesisGz))
	if err != nil {
		return nil, fmt.Errorf("synthdydx: genesis: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("synthdydx: genesis: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var g map[string]any
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("synthdydx: genesis: %w", err)
	}
	return g, nil
}

// reset starts generating from genesis again.
func (c *Chain) reset() {
	c.g = newGenerator(c.p, c.start.clone(), c.reg)
	c.kept = map[int64]*replaynode.Block{}
	c.byHash = map[string]int64{}
}

// FirstHeight is 1.
func (c *Chain) FirstHeight() int64 { return 1 }

// LastHeight is the last height of the profile's days.
func (c *Chain) LastHeight() int64 { return c.p.Blocks() }

// Block returns the block at height, generating up to it.
func (c *Chain) Block(height int64) (*replaynode.Block, error) {
	if height < 1 || height > c.LastHeight() {
		return nil, fmt.Errorf("height %d is not in the generated chain (1..%d)", height, c.LastHeight())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.kept[height]; ok {
		return b, nil
	}
	if height <= c.g.height {
		c.reset()
	}
	if err := c.advanceTo(height); err != nil {
		return nil, err
	}
	return c.kept[height], nil
}

// advanceTo generates the blocks after the generator's last up to height,
// keeping the last Window of them; c.mu is held.
func (c *Chain) advanceTo(height int64) error {
	for c.g.height < height {
		b, err := c.g.next()
		if err != nil {
			return err
		}
		c.kept[b.Height] = b
		c.byHash[b.Hash] = b.Height
		if b.Height == 1 {
			c.first = b
		}
		if old, ok := c.kept[b.Height-c.p.Window]; ok {
			delete(c.byHash, old.Hash)
			delete(c.kept, old.Height)
		}
	}
	return nil
}

// Summary describes a height without generating it: its time, and its
// hashes when it is kept (or is height 1).
func (c *Chain) Summary(height int64) replaynode.Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.kept[height]; ok {
		return *b
	}
	if height == 1 && c.first != nil {
		return *c.first
	}
	return replaynode.Block{Height: height, Time: c.p.blockTime(height).Format(time.RFC3339Nano)}
}

// BlockByHash returns a kept block by its upper-case hex hash.
func (c *Chain) BlockByHash(hash string) (*replaynode.Block, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.byHash[hash]
	if !ok {
		return nil, false
	}
	return c.kept[h], true
}

// Status is the node's /status; replaynode rewrites its sync_info.
func (c *Chain) Status() json.RawMessage { return c.status }

// Validators is the validator set, the same at every height.
func (c *Chain) Validators() []json.RawMessage { return c.validators }

// Genesis is the GenesisDoc JSON.
func (c *Chain) Genesis() json.RawMessage { return c.genesis }

// ABCIInfo is nil: the node serves no abci_info.
func (c *Chain) ABCIInfo() json.RawMessage { return nil }

// statusJSON is a CometBFT 0.38 /status of a dYdX node (its sync_info is
// rewritten by replaynode for each call).
func (c *Chain) statusJSON() (json.RawMessage, error) {
	nodeKey := ed25519.GenPrivKeyFromSecret([]byte("synthdydx node"))
	v0 := c.start.vals.Validators[0]
	st := coretypes.ResultStatus{
		NodeInfo: p2p.DefaultNodeInfo{
			ProtocolVersion: p2p.NewProtocolVersion(8, 11, 0),
			DefaultNodeID:   p2p.PubKeyToID(nodeKey.PubKey()),
			ListenAddr:      "tcp://0.0.0.0:26656",
			Network:         c.p.ChainID,
			Version:         "0.38.5",
			Channels:        []byte{0x40, 0x20, 0x21, 0x22, 0x23, 0x30, 0x38, 0x60, 0x61, 0x00},
			Moniker:         "synthdydx",
			Other:           p2p.DefaultNodeInfoOther{TxIndex: "on", RPCAddress: "tcp://0.0.0.0:26657"},
		},
		SyncInfo: coretypes.SyncInfo{
			LatestBlockHeight: 1, LatestBlockTime: c.p.Genesis, EarliestBlockHeight: 1, EarliestBlockTime: c.p.Genesis,
		},
		ValidatorInfo: coretypes.ValidatorInfo{Address: v0.Address, PubKey: v0.PubKey, VotingPower: v0.VotingPower},
	}
	b, err := cmtjson.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("synthdydx: encode status: %w", err)
	}
	return b, nil
}

// Config is the chain's entry for a chainlens config's `chains:` list.
func Config(p Profile, rpcURL string) string {
	return fmt.Sprintf("  - {id: %s, kind: dydx, bech32_prefix: dydx, rpc: [%s]}\n", p.ChainID, rpcURL)
}

// upperHex is CometBFT's rendering of a hash.
func upperHex(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }

// blockTime is the time of a height: one block time apart from genesis,
// with up to 150 ms of the proposer's jitter (a function of the seed and
// height, so that a height's time is known before it is generated).
func (p Profile) blockTime(height int64) time.Time {
	z := p.Seed ^ uint64(height)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	jitter := time.Duration(z%150) * time.Millisecond
	return p.Genesis.Add(time.Duration(height)*p.BlockTime + jitter).UTC()
}
