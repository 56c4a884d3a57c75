// Package synthevm generates a mainnet-shaped EVM chain, deterministic for
// a seed, and serves it through evmreplay's JSON-RPC node (it is an
// evmreplay.Source): blocks at the chain's block time, with as many
// stablecoin transfers, mints and burns a day as a busy mainnet has, in
// the wire form of go-ethereum's eth_getBlockByNumber and eth_getLogs.
//
// The state is consistent: every token starts with a minted supply held by
// a set of funding accounts, a transfer moves at most half of its sender's
// balance, a burn at most half of its burner's, so no balance is ever
// negative and each token's supply is its mints minus its burns. The chain
// is generated in order as it is read (an indexer reads forward): the
// blocks of the last Window heights are kept, compactly; reading further
// back regenerates from genesis.
//
// What the profile assumes (Ethereum mainnet, 2025-2026, from public
// explorers; there is no mainnet EVM recording to measure): 12 s blocks
// (7,200 a day); USDT-like ~240,000 transfers a day, USDC-like ~160,000,
// DAI-like ~20,000; a few hundred mints and burns a day for the USDC- and
// DAI-like tokens (USDT's Issue/Redeem are rare: here its supply is only
// its opening mint, a Transfer from the zero address like the others');
// recipients drawn from 500,000 holders, a few of them (exchanges, the
// DEX routers) far more often than the rest.
package synthevm

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/chainlens/chainlens/chains/evm"
	"github.com/chainlens/chainlens/devchain/evmreplay"
)

// Token is one generated stablecoin.
type Token struct {
	Symbol   string
	Address  common.Address
	Decimals int
	// PerDay are its transfers a day; Mints and Burns a day.
	PerDay, Mints, Burns int
}

// Profile is the shape of a generated chain.
type Profile struct {
	ChainID   uint64
	BlockTime time.Duration
	Days      int
	Seed      uint64
	Holders   int
	Tokens    []Token
	// Genesis is block 0's time (a node started with Rebase moves it).
	Genesis time.Time
	// Window is how many recent heights are kept for reading again.
	Window int64
}

// Ethereum is the evm profile: Ethereum mainnet's block time and
// stablecoin traffic, days long.
func Ethereum(days int, seed uint64) Profile {
	addr := func(s string) common.Address {
		return common.BytesToAddress(crypto.Keccak256([]byte("synthevm token " + s))[12:])
	}
	return Profile{ChainID: 1, BlockTime: 12 * time.Second, Days: days, Seed: seed, Holders: 500_000,
		Genesis: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Window: 50_000,
		Tokens: []Token{
			{Symbol: "USDT", Address: addr("USDT"), Decimals: 6, PerDay: 240_000},
			{Symbol: "USDC", Address: addr("USDC"), Decimals: 6, PerDay: 160_000, Mints: 150, Burns: 120},
			{Symbol: "DAI", Address: addr("DAI"), Decimals: 18, PerDay: 20_000, Mints: 60, Burns: 50},
		}}
}

// EndAt places the chain so that its last height is at t.
func (p *Profile) EndAt(t time.Time) {
	last := time.Duration(p.Days) * 24 * time.Hour / p.BlockTime
	p.Genesis = t.Add(-last * p.BlockTime).UTC().Truncate(time.Second)
}

// move is one generated token movement (from or to the zero holder -1:
// a mint or a burn). Amounts are in micro units (6 decimals) and scaled
// to the token's decimals when written.
type move struct {
	token    uint8
	from, to int32
	amount   uint64
}

// Chain is a generated chain.
type Chain struct {
	p Profile
	// funders hold each token's opening supply.
	funders int

	mu      sync.Mutex
	next    int64            // next height to generate
	rng     *rand.Rand       // the generator's stream, in height order
	balance [][]uint64       // token → holder → micro units
	funded  [][]int32        // token → holders with a balance, to draw senders from
	kept    map[int64][]move // the last Window heights' movements
}

// New returns the chain of a profile.
func New(p Profile) *Chain {
	c := &Chain{p: p, funders: 1_000}
	c.reset()
	return c
}

func (c *Chain) reset() {
	c.next = 0
	c.rng = rand.New(rand.NewPCG(c.p.Seed, 0x5eed))
	c.balance = make([][]uint64, len(c.p.Tokens))
	c.funded = make([][]int32, len(c.p.Tokens))
	for i := range c.p.Tokens {
		c.balance[i] = make([]uint64, c.p.Holders)
	}
	c.kept = map[int64][]move{}
}

// LastHeight is the last block of Days days.
func (c *Chain) LastHeight() int64 {
	return int64(time.Duration(c.p.Days) * 24 * time.Hour / c.p.BlockTime)
}

// Info answers eth_chainId, net_version and web3_clientVersion.
func (c *Chain) Info(method string) (json.RawMessage, bool) {
	switch method {
	case "eth_chainId":
		return quote(hexutil.EncodeUint64(c.p.ChainID)), true
	case "net_version":
		return quote(strconv.FormatUint(c.p.ChainID, 10)), true
	case "web3_clientVersion":
		return quote("Geth/v1.17.8-stable/linux-amd64/go1.26.8 (chainlens synthevm)"), true
	}
	return nil, false
}

// Time is block h's timestamp.
func (c *Chain) Time(h int64) (uint64, error) {
	return uint64(c.p.Genesis.Add(time.Duration(h) * c.p.BlockTime).Unix()), nil
}

func (c *Chain) hash(kind string, h int64, i int) common.Hash {
	var b [8 + 8 + 4]byte
	binary.BigEndian.PutUint64(b[:], c.p.Seed)
	binary.BigEndian.PutUint64(b[8:], uint64(h))
	binary.BigEndian.PutUint32(b[16:], uint32(i))
	return crypto.Keccak256Hash([]byte(kind), b[:])
}

// BlockHash is block h's hash (a function of the seed and h alone).
func (c *Chain) BlockHash(h int64) common.Hash { return c.hash("block", h, 0) }

func (c *Chain) holder(i int32) common.Address {
	if i < 0 {
		return common.Address{}
	}
	return common.BytesToAddress(c.hash("holder", int64(i), 0).Bytes()[12:])
}

// Block is eth_getBlockByNumber(h, false) in go-ethereum's form: one
// transaction per movement.
func (c *Chain) Block(h int64) (json.RawMessage, error) {
	moves, err := c.moves(h)
	if err != nil {
		return nil, err
	}
	t, _ := c.Time(h)
	txs := make([]string, len(moves))
	for i := range moves {
		txs[i] = c.hash("tx", h, i).Hex()
	}
	parent := common.Hash{}
	if h > 0 {
		parent = c.BlockHash(h - 1)
	}
	zero := "0x" + fmt.Sprintf("%064x", 0)
	b := map[string]any{
		"baseFeePerGas": "0x3b9aca00", "blobGasUsed": "0x0", "difficulty": "0x0", "excessBlobGas": "0x0",
		"extraData": "0x", "gasLimit": "0x1c9c380", "gasUsed": hexutil.EncodeUint64(uint64(len(moves)) * 51_000),
		"hash": c.BlockHash(h).Hex(), "logsBloom": "0x" + fmt.Sprintf("%0512x", 0), "miner": c.holder(int32(h % 50)).Hex(),
		"mixHash": c.hash("mix", h, 0).Hex(), "nonce": "0x0000000000000000", "number": hexutil.EncodeUint64(uint64(h)),
		"parentBeaconBlockRoot": zero, "parentHash": parent.Hex(), "receiptsRoot": c.hash("receipts", h, 0).Hex(),
		"requestsHash": "0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"sha3Uncles":   "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347",
		"size":         hexutil.EncodeUint64(uint64(600 + 180*len(moves))), "stateRoot": c.hash("state", h, 0).Hex(),
		"timestamp": hexutil.EncodeUint64(t), "transactions": txs, "transactionsRoot": c.hash("txroot", h, 0).Hex(),
		"uncles": []string{}, "withdrawals": []any{}, "withdrawalsRoot": "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421",
	}
	return json.Marshal(b)
}

// transferTopic is the ERC-20 Transfer event's topic0.
var transferTopic = evm.TopicTransfer

// Logs visits the Transfer logs of blocks from..to.
func (c *Chain) Logs(from, to int64, fn func(l *evmreplay.Log) bool) error {
	for h := from; h <= to; h++ {
		moves, err := c.moves(h)
		if err != nil {
			return err
		}
		t, _ := c.Time(h)
		for i, m := range moves {
			tok := c.p.Tokens[m.token]
			amount := new(big.Int).SetUint64(m.amount)
			if tok.Decimals > 6 {
				amount.Mul(amount, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tok.Decimals-6)), nil))
			}
			topics := []common.Hash{transferTopic, common.BytesToHash(c.holder(m.from).Bytes()), common.BytesToHash(c.holder(m.to).Bytes())}
			l := &evmreplay.Log{Block: uint64(h), Address: tok.Address, Topics: topics, Raw: map[string]json.RawMessage{
				"address":          quote(lower(tok.Address)),
				"topics":           mustJSON([]string{topics[0].Hex(), topics[1].Hex(), topics[2].Hex()}),
				"data":             quote(hexutil.Encode(common.BigToHash(amount).Bytes())),
				"blockNumber":      quote(hexutil.EncodeUint64(uint64(h))),
				"transactionHash":  quote(c.hash("tx", h, i).Hex()),
				"transactionIndex": quote(hexutil.EncodeUint64(uint64(i))),
				"blockHash":        quote(c.BlockHash(h).Hex()),
				"blockTimestamp":   quote(hexutil.EncodeUint64(t)),
				"logIndex":         quote(hexutil.EncodeUint64(uint64(i))),
				"removed":          json.RawMessage("false"),
			}}
			if !fn(l) {
				return nil
			}
		}
	}
	return nil
}

// moves are block h's movements, generated (in order) when not kept.
func (c *Chain) moves(h int64) ([]move, error) {
	if h < 0 || h > c.LastHeight() {
		return nil, fmt.Errorf("block %d is beyond the generated chain (0..%d)", h, c.LastHeight())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.kept[h]; ok {
		return m, nil
	}
	if h < c.next {
		c.reset() // read again further back than the window: start over
	}
	for c.next <= h {
		c.kept[c.next] = c.generate(c.next)
		delete(c.kept, c.next-c.p.Window)
		c.next++
	}
	return c.kept[h], nil
}

// perBlock draws how many of perDay events fall in one block.
func (c *Chain) perBlock(perDay int) int {
	mean := float64(perDay) * c.p.BlockTime.Seconds() / 86400
	n := int(mean)
	if c.rng.Float64() < mean-float64(n) {
		n++
	}
	// ±50% around the mean, so blocks differ.
	if n > 1 {
		n = n/2 + c.rng.IntN(n+1)
	}
	return n
}

// recipient draws a holder: a fifth of the traffic goes to the 20 busiest
// (exchanges, routers), the rest uniformly.
func (c *Chain) recipient() int32 {
	if c.rng.IntN(5) == 0 {
		return int32(c.rng.IntN(20))
	}
	return int32(c.rng.IntN(c.p.Holders))
}

// amount draws a transfer size in micro units between $1 and $1M (log
// uniform), at most half of what the sender holds.
func (c *Chain) amount(balance uint64) uint64 {
	a := uint64(1e6 * math.Pow(10, c.rng.Float64()*6))
	return max(1, min(a, balance/2))
}

func (c *Chain) credit(tok uint8, h int32, amount uint64) {
	if c.balance[tok][h] == 0 {
		c.funded[tok] = append(c.funded[tok], h)
	}
	c.balance[tok][h] += amount
}

// generate makes block h's movements.
func (c *Chain) generate(h int64) []move {
	var out []move
	if h == 1 {
		// The opening supply: 1,000 funders hold $10M each of every token.
		for t := range c.p.Tokens {
			for f := range c.funders {
				m := move{token: uint8(t), from: -1, to: int32(f), amount: 10_000_000 * 1e6}
				c.credit(m.token, m.to, m.amount)
				out = append(out, m)
			}
		}
		return out
	}
	if h == 0 {
		return nil
	}
	// The block's slots, interleaved as a block's txs are, then generated
	// in that order (a transfer spends what the ones before it credited).
	type slot struct {
		token uint8
		kind  byte // m(int), t(ransfer), b(urn)
	}
	var slots []slot
	for t, tok := range c.p.Tokens {
		for kind, n := range map[byte]int{'m': c.perBlock(tok.Mints), 't': c.perBlock(tok.PerDay), 'b': c.perBlock(tok.Burns)} {
			for range n {
				slots = append(slots, slot{uint8(t), kind})
			}
		}
	}
	slices.SortFunc(slots, func(a, b slot) int { return int(a.token)*256 + int(a.kind) - int(b.token)*256 - int(b.kind) }) // map order is random
	c.rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
	for _, sl := range slots {
		t := sl.token
		switch sl.kind {
		case 'm':
			m := move{token: t, from: -1, to: int32(c.rng.IntN(c.funders)), amount: uint64(1e6 * math.Pow(10, 3+c.rng.Float64()*4))}
			c.credit(t, m.to, m.amount)
			out = append(out, m)
		case 't':
			from := c.funded[t][c.rng.IntN(len(c.funded[t]))]
			to := c.recipient()
			if c.balance[t][from] < 2 || to == from {
				continue
			}
			m := move{token: t, from: from, to: to, amount: c.amount(c.balance[t][from])}
			c.balance[t][from] -= m.amount
			c.credit(t, to, m.amount)
			out = append(out, m)
		case 'b':
			from := int32(c.rng.IntN(c.funders))
			if c.balance[t][from] < 2 {
				continue
			}
			m := move{token: t, from: from, to: -1, amount: c.amount(c.balance[t][from])}
			c.balance[t][from] -= m.amount
			out = append(out, m)
		}
	}
	return out
}

func quote(s string) json.RawMessage { return json.RawMessage(strconv.Quote(s)) }

func lower(a common.Address) string { return evm.Address(a) }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Config is the chainlens config entry of the chain served at rpcURL: its
// tokens, and its 20 busiest holders labelled (the first ten exchanges,
// the next ten DEX pools), as an operator would.
func Config(p Profile, rpcURL string) string {
	c := &Chain{p: p}
	var b strings.Builder
	fmt.Fprintf(&b, "  - id: ethereum-%d\n    kind: evm\n    evm_chain_id: %d\n    rpc: [%s]\n    confirmations: 0\n    tokens:\n", p.ChainID, p.ChainID, rpcURL)
	for _, t := range p.Tokens {
		// A TetherToken-style owner (what Issue/Redeem would move) is named
		// so the indexer never needs eth_call, which the node does not serve.
		owner := ""
		if t.Symbol == "USDT" {
			owner = fmt.Sprintf(", owner: %q", lower(c.holder(0)))
		}
		fmt.Fprintf(&b, "      - {address: %q, symbol: %s, name: %s, decimals: %d%s}\n", lower(t.Address), t.Symbol, t.Symbol, t.Decimals, owner)
	}
	b.WriteString("    address_labels:\n")
	for i := range int32(20) {
		label := "cex"
		if i >= 10 {
			label = "dex"
		}
		fmt.Fprintf(&b, "      %q: %s\n", lower(c.holder(i)), label)
	}
	return b.String()
}
