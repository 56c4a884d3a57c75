package synthdydx

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"time"

	cmtjson "github.com/cometbft/cometbft/libs/json"

	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/devchain/synthcomet"
)

//go:embed mainnet-genesis.json.gz
var mainnetGenesisGz []byte

// Chain is a generated chain served as a replaynode.Source.
type Chain struct {
	*synthcomet.Blocks[*generator]
	p          Profile
	genesis    json.RawMessage
	status     json.RawMessage
	validators []json.RawMessage
	start      *state // the state at genesis, copied to regenerate
	reg        *protoset.Registry
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
	if c.status, err = synthcomet.Status(p.ChainID, "0.38.5", "synthdydx", st.vals.Validators[0], p.Genesis); err != nil {
		return nil, err
	}
	c.Blocks = synthcomet.NewBlocks(func() *generator { return newGenerator(p, st.clone(), reg) }, p.Blocks(), p.Window, p.blockTime)
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

// Status is the node's /status; replaynode rewrites its sync_info.
func (c *Chain) Status() json.RawMessage { return c.status }

// Validators is the validator set, the same at every height.
func (c *Chain) Validators() []json.RawMessage { return c.validators }

// Genesis is the GenesisDoc JSON.
func (c *Chain) Genesis() json.RawMessage { return c.genesis }

// ABCIInfo is nil: the node serves no abci_info.
func (c *Chain) ABCIInfo() json.RawMessage { return nil }

// Config is the chain's entry for a chainlens config's `chains:` list.
func Config(p Profile, rpcURL string) string {
	return fmt.Sprintf("  - {id: %s, kind: dydx, bech32_prefix: dydx, rpc: [%s]}\n", p.ChainID, rpcURL)
}

// blockTime is the time of a height: one block time apart from genesis,
// with the proposer's jitter.
func (p Profile) blockTime(height int64) time.Time {
	return synthcomet.BlockTime(p.Genesis, p.BlockTime, p.Seed, height)
}
