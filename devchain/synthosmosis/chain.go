package synthosmosis

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	cmtjson "github.com/cometbft/cometbft/libs/json"

	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/devchain/synthcomet"
)

// Chain is a generated Osmosis chain served as a replaynode.Source.
type Chain struct {
	*synthcomet.Blocks[*generator]
	p          Profile
	genesis    json.RawMessage
	status     json.RawMessage
	validators []json.RawMessage
	reg        *protoset.Registry
}

var (
	_ replaynode.Source     = (*Chain)(nil)
	_ replaynode.Summarizer = (*Chain)(nil)
)

// New builds the chain's genesis and validator set; blocks are generated
// when read.
func New(p Profile) (*Chain, error) {
	if p.Days < 1 || p.BlockTime <= 0 || p.Window < 1 || p.Validators < 1 || p.Traders < 2 || p.BalancerPools+p.StableswapPools+p.CLPools < 2 {
		return nil, fmt.Errorf("synthosmosis: profile needs days, block time, window, validators, two traders and two pools")
	}
	st, err := newState(p)
	if err != nil {
		return nil, err
	}
	reg, err := protoset.NewShipped("cosmos", "osmosis")
	if err != nil {
		return nil, fmt.Errorf("synthosmosis: %w", err)
	}
	c := &Chain{p: p, reg: reg}
	if c.genesis, err = st.genesisDoc(p); err != nil {
		return nil, err
	}
	for _, v := range st.vals.Validators {
		b, err := cmtjson.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("synthosmosis: encode validator: %w", err)
		}
		c.validators = append(c.validators, b)
	}
	if c.status, err = synthcomet.Status(p.ChainID, "0.38.17", "synthosmosis", st.vals.Validators[0], p.Genesis); err != nil {
		return nil, err
	}
	first := st
	c.Blocks = synthcomet.NewBlocks(func() *generator {
		s := first
		if s == nil {
			// The state is a function of the profile: regenerating it
			// cannot fail where the first time did not.
			var err error
			if s, err = newState(p); err != nil {
				panic(err)
			}
		}
		first = nil
		return newGenerator(p, s, reg)
	}, p.Blocks(), p.Window, p.blockTime)
	return c, nil
}

// Status is the node's /status; replaynode rewrites its sync_info.
func (c *Chain) Status() json.RawMessage { return c.status }

// Validators is the validator set, the same at every height.
func (c *Chain) Validators() []json.RawMessage { return c.validators }

// Genesis is the GenesisDoc JSON.
func (c *Chain) Genesis() json.RawMessage { return c.genesis }

// ABCIInfo is nil: the node serves no abci_info.
func (c *Chain) ABCIInfo() json.RawMessage { return nil }

// Config is the chain's entry for a chainlens config's `chains:` list,
// with the priced assets (USDC is the USD anchor).
func Config(p Profile, rpcURL string) string {
	var assets []string
	for _, a := range Assets {
		assets = append(assets, fmt.Sprintf("{denom: %q, symbol: %s, exponent: %d}", a.denom, a.symbol, a.exp))
	}
	return fmt.Sprintf("  - {id: %s, kind: osmosis, bech32_prefix: osmo, rpc: [%s], assets: [%s]}\n", p.ChainID, rpcURL, strings.Join(assets, ", "))
}

// blockTime is the time of a height: one block time apart from genesis,
// with the proposer's jitter.
func (p Profile) blockTime(height int64) time.Time {
	return synthcomet.BlockTime(p.Genesis, p.BlockTime, p.Seed, height)
}
