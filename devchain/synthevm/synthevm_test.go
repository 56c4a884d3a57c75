package synthevm_test

import (
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/evmreplay"
	"github.com/chainlens/chainlens/devchain/synthevm"
)

// small is the evm profile over two hours with few holders, so transfers
// often hit the same accounts.
func small() synthevm.Profile {
	p := synthevm.Ethereum(1, 7)
	p.Holders = 5_000
	p.Window = 100
	return p
}

// replay reads blocks from..to of c and folds them into balances and
// supplies, failing on a balance below zero.
func replay(t *testing.T, c *synthevm.Chain, from, to int64, check bool) (logs int, digest string, supply map[common.Address]*big.Int) {
	t.Helper()
	balance := map[[2]common.Address]*big.Int{}
	supply = map[common.Address]*big.Int{}
	h := new(big.Int)
	err := c.Logs(from, to, func(l *evmreplay.Log) bool {
		logs++
		amount := new(big.Int).SetBytes(hexutil.MustDecode(unquote(t, l.Raw["data"])))
		from, to := common.BytesToAddress(l.Topics[1].Bytes()), common.BytesToAddress(l.Topics[2].Bytes())
		if supply[l.Address] == nil {
			supply[l.Address] = new(big.Int)
		}
		if from == (common.Address{}) {
			supply[l.Address].Add(supply[l.Address], amount)
		} else {
			k := [2]common.Address{l.Address, from}
			if balance[k] == nil {
				balance[k] = new(big.Int)
			}
			balance[k].Sub(balance[k], amount)
			if check && balance[k].Sign() < 0 {
				t.Fatalf("block %d: %s's balance of %s below zero", l.Block, from, l.Address)
			}
		}
		if to == (common.Address{}) {
			supply[l.Address].Sub(supply[l.Address], amount)
		} else {
			k := [2]common.Address{l.Address, to}
			if balance[k] == nil {
				balance[k] = new(big.Int)
			}
			balance[k].Add(balance[k], amount)
		}
		h.Add(h, amount)
		h.Add(h, new(big.Int).SetUint64(l.Block))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every supply is the sum of its holders' balances.
	sums := map[common.Address]*big.Int{}
	for k, b := range balance {
		if sums[k[0]] == nil {
			sums[k[0]] = new(big.Int)
		}
		sums[k[0]].Add(sums[k[0]], b)
	}
	for tok, s := range supply {
		if !check {
			break
		}
		if sums[tok] == nil || sums[tok].Cmp(s) != 0 {
			t.Fatalf("token %s: supply %s, balances %v", tok, s, sums[tok])
		}
	}
	return logs, h.String(), supply
}

func unquote(t *testing.T, raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestChainIsConsistentAndDeterministic(t *testing.T) {
	const to = 600 // two hours of 12 s blocks
	a := synthevm.New(small())
	logs, digest, supply := replay(t, a, 0, to, true)
	// ~420,000 transfers a day and the opening mints: about 35 a block.
	if perBlock := float64(logs-3000) / to; perBlock < 50 || perBlock > 70 {
		t.Errorf("%d logs over %d blocks: %.1f a block, want about 58", logs, to, perBlock)
	}
	if len(supply) != 3 {
		t.Fatalf("supplies of %d tokens", len(supply))
	}
	// The same seed is the same chain, read in one go or block by block,
	// and read again from far back (beyond the kept window).
	b := synthevm.New(small())
	total := 0
	for h := int64(0); h <= to; h += 150 {
		n, _, _ := replay(t, b, h, min(h+149, to), false)
		total += n
	}
	if total != logs {
		t.Fatalf("read in parts: %d logs, in one go %d", total, logs)
	}
	_, again, _ := replay(t, b, 0, to, true)
	if again != digest {
		t.Fatalf("read again from genesis: %s, first read %s", again, digest)
	}
	// Blocks name their parents and carry one tx per log.
	var prev common.Hash
	for h := int64(0); h <= 3; h++ {
		raw, err := a.Block(h)
		if err != nil {
			t.Fatal(err)
		}
		var blk struct {
			Hash, ParentHash common.Hash
			Timestamp        hexutil.Uint64
			Transactions     []common.Hash
		}
		if err := json.Unmarshal(raw, &blk); err != nil {
			t.Fatal(err)
		}
		if h > 0 && blk.ParentHash != prev {
			t.Fatalf("block %d's parent %s, want %s", h, blk.ParentHash, prev)
		}
		if want := time.Date(2026, 1, 1, 0, 0, int(12*h), 0, time.UTC).Unix(); int64(blk.Timestamp) != want {
			t.Fatalf("block %d at %d, want %d", h, blk.Timestamp, want)
		}
		prev = blk.Hash
	}
	if _, err := a.Block(a.LastHeight() + 1); err == nil {
		t.Fatal("a block beyond the chain was generated")
	}
}

// TestConfigIsAValidChain: the config entry --print-config writes is a
// chain chainlens accepts, with the profile's tokens and 20 labels.
func TestConfigIsAValidChain(t *testing.T) {
	p := synthevm.Ethereum(1, 1)
	cfg, err := config.Parse([]byte("database: {url: \"postgres://postgres@127.0.0.1:5432/x\"}\nchains:\n"+synthevm.Config(p, "http://127.0.0.1:8545")), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := cfg.Chains[0]
	if ch.ID != "ethereum-1" || !ch.IsEVM() || len(ch.Tokens) != 3 || len(ch.AddressLabels) != 20 || ch.Tokens[0].Owner == "" || ch.Tokens[1].Owner != "" {
		t.Fatalf("chain %+v", ch)
	}
}
