package evm_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/rpc"
)

// devNode is a real go-ethereum node in dev mode, in process: the node
// stack with HTTP JSON-RPC on 127.0.0.1 (random port), the eth service
// with geth's dev genesis, the filter API (eth_getLogs) and the simulated
// beacon that seals blocks — the wiring of `geth --dev` (cmd/geth
// config.go, cmd/utils flags.go) with the block period 0 of
// ethclient/simulated, so the test decides when a block is sealed and can
// fork the chain. Everything the indexer sees goes over HTTP.
type devNode struct {
	t       testing.TB
	stack   *node.Node
	backend *eth.Ethereum
	beacon  *catalyst.SimulatedBeacon
	url     string
	c       *ethclient.Client
	chainID *big.Int
	signer  types.Signer
	keys    map[string]*ecdsa.PrivateKey
	nonce   map[string]uint64
}

// nodeOptions tune the node.
type nodeOptions struct {
	// rangeLimit is geth's own eth_getLogs block-range cap (--rpc.rangelimit); 0 = none.
	rangeLimit uint64
}

var accounts = []string{"deployer", "minter", "treasury", "daimaker", "alice", "bob", "carol", "dave"}

func startNode(t testing.TB, opt nodeOptions) *devNode {
	t.Helper()
	n := &devNode{t: t, keys: map[string]*ecdsa.PrivateKey{}, nonce: map[string]uint64{}}
	genesis := core.DeveloperGenesisBlock(60_000_000, nil)
	// As in the recording: geth v1.17.8 --dev also enables the unreleased
	// Bogota fork, whose gas schedule makes ordinary storage writes run out
	// of gas; the recorded chain ran without it.
	cc := *genesis.Config
	cc.BogotaTime = nil
	genesis.Config = &cc
	fund, _ := new(big.Int).SetString("1000000000000000000000000", 10)
	for _, name := range accounts {
		k, err := crypto.ToECDSA(crypto.Keccak256([]byte("chainlens devnode " + name)))
		if err != nil {
			t.Fatal(err)
		}
		n.keys[name] = k
		genesis.Alloc[crypto.PubkeyToAddress(k.PublicKey)] = types.Account{Balance: fund}
	}

	nodeCfg := node.DefaultConfig
	nodeCfg.DataDir = "" // in memory
	nodeCfg.P2P = p2p.Config{NoDiscovery: true, MaxPeers: 0}
	nodeCfg.HTTPHost, nodeCfg.HTTPPort = "127.0.0.1", 0
	nodeCfg.HTTPModules = []string{"eth", "net", "web3"}
	nodeCfg.AuthPort = 0
	stack, err := node.New(&nodeCfg)
	if err != nil {
		t.Fatal(err)
	}
	ethCfg := ethconfig.Defaults
	ethCfg.Genesis = genesis
	ethCfg.NetworkId = genesis.Config.ChainID.Uint64()
	ethCfg.SyncMode = ethconfig.FullSync
	ethCfg.Miner.GasCeil = 60_000_000
	ethCfg.Miner.GasPrice = big.NewInt(1)
	ethCfg.TxPool.NoLocals = true
	backend, err := eth.New(stack, &ethCfg)
	if err != nil {
		stack.Close()
		t.Fatal(err)
	}
	fs := filters.NewFilterSystem(backend.APIBackend, filters.Config{LogCacheSize: ethCfg.FilterLogCacheSize, LogQueryLimit: ethCfg.LogQueryLimit, RangeLimit: opt.rangeLimit})
	stack.RegisterAPIs([]rpc.API{{Namespace: "eth", Service: filters.NewFilterAPI(fs)}})
	if err := stack.Start(); err != nil {
		stack.Close()
		t.Fatal(err)
	}
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, backend)
	if err != nil {
		stack.Close()
		t.Fatal(err)
	}
	// As ethclient/simulated does: make the genesis the beacon's head.
	if err := beacon.Fork(backend.BlockChain().GetCanonicalHash(0)); err != nil {
		stack.Close()
		t.Fatal(err)
	}
	n.stack, n.backend, n.beacon = stack, backend, beacon
	n.url = stack.HTTPEndpoint()
	if !strings.HasPrefix(n.url, "http://127.0.0.1:") {
		t.Fatalf("node endpoint %s is not on loopback", n.url)
	}
	n.c, err = ethclient.Dial(n.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.c.Close()
		_ = beacon.Stop()
		_ = stack.Close()
	})
	n.chainID = genesis.Config.ChainID
	n.signer = types.LatestSignerForChainID(n.chainID)
	return n
}

func (n *devNode) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	n.t.Cleanup(cancel)
	return ctx
}

func (n *devNode) addr(name string) common.Address {
	k, ok := n.keys[name]
	if !ok {
		n.t.Fatalf("no account %s", name)
	}
	return crypto.PubkeyToAddress(k.PublicKey)
}

// send signs and sends a transaction (to == nil: contract creation).
func (n *devNode) send(from string, to *common.Address, data []byte, gas uint64) common.Hash {
	n.t.Helper()
	tx := types.NewTx(&types.DynamicFeeTx{
		ChainID: n.chainID, Nonce: n.nonce[from], GasTipCap: big.NewInt(1_000_000_000), GasFeeCap: big.NewInt(100_000_000_000),
		Gas: gas, To: to, Data: data,
	})
	signed, err := types.SignTx(tx, n.signer, n.keys[from])
	if err != nil {
		n.t.Fatal(err)
	}
	if err := n.c.SendTransaction(n.ctx(), signed); err != nil {
		n.t.Fatalf("send from %s: %v", from, err)
	}
	n.nonce[from]++
	return signed.Hash()
}

// commit seals a block with the pending transactions and returns its number.
func (n *devNode) commit() int64 {
	n.t.Helper()
	n.beacon.Commit()
	return n.head()
}

func (n *devNode) head() int64 {
	n.t.Helper()
	h, err := n.c.BlockNumber(n.ctx())
	if err != nil {
		n.t.Fatal(err)
	}
	return int64(h)
}

// hashAt is the hash the node reports for a block (read, not recomputed).
func (n *devNode) hashAt(h int64) string {
	n.t.Helper()
	var b struct {
		Hash common.Hash `json:"hash"`
	}
	if err := n.c.Client().CallContext(n.ctx(), &b, "eth_getBlockByNumber", "0x"+big.NewInt(h).Text(16), false); err != nil {
		n.t.Fatal(err)
	}
	return b.Hash.Hex()
}

// fork makes the block at height the head, drops the transactions the
// reorg put back into the pool and resynchronises nonces, so the next
// commits build a different chain on top of it.
func (n *devNode) fork(height int64) {
	n.t.Helper()
	parent := n.backend.BlockChain().GetCanonicalHash(uint64(height))
	if err := n.beacon.Fork(parent); err != nil {
		n.t.Fatal(err)
	}
	if err := n.backend.TxPool().Sync(); err != nil {
		n.t.Fatal(err)
	}
	n.beacon.Rollback()
	for name := range n.keys {
		nonce, err := n.c.NonceAt(n.ctx(), n.addr(name), nil)
		if err != nil {
			n.t.Fatal(err)
		}
		n.nonce[name] = nonce
	}
}

func (n *devNode) receipt(h common.Hash) *types.Receipt {
	n.t.Helper()
	r, err := n.c.TransactionReceipt(n.ctx(), h)
	if err != nil {
		n.t.Fatalf("receipt %s: %v", h.Hex(), err)
	}
	return r
}

// contract is a deployed test token.
type contract struct {
	name string
	abi  abi.ABI
	addr common.Address
}

func (c contract) address() string { return strings.ToLower(c.addr.Hex()) }

var testdata = filepath.Join("..", "..", "testdata", "evm")

// deploy creates one of the testdata contracts (creation code from the
// recording plus the ABI-encoded constructor arguments).
func (n *devNode) deploy(from, name string, args ...any) (contract, common.Hash) {
	n.t.Helper()
	f, err := os.Open(filepath.Join(testdata, name+".abi.json"))
	if err != nil {
		n.t.Fatal(err)
	}
	defer f.Close()
	a, err := abi.JSON(f)
	if err != nil {
		n.t.Fatal(err)
	}
	code, err := os.ReadFile(filepath.Join(testdata, name+".bin"))
	if err != nil {
		n.t.Fatal(err)
	}
	bin, err := hex.DecodeString(strings.TrimSpace(string(code)))
	if err != nil {
		n.t.Fatal(err)
	}
	ctorArgs, err := a.Pack("", args...)
	if err != nil {
		n.t.Fatal(err)
	}
	addr := crypto.CreateAddress(n.addr(from), n.nonce[from])
	h := n.send(from, nil, append(bin, ctorArgs...), 5_000_000)
	return contract{name: name, abi: a, addr: addr}, h
}

// tx calls a contract method in a transaction.
func (n *devNode) tx(from string, c contract, method string, args ...any) common.Hash {
	n.t.Helper()
	data, err := c.abi.Pack(method, args...)
	if err != nil {
		n.t.Fatalf("%s.%s: %v", c.name, method, err)
	}
	return n.send(from, &c.addr, data, 500_000)
}

// view calls a view method with eth_call at a block and returns its first result.
func (n *devNode) view(c contract, block int64, method string, args ...any) any {
	n.t.Helper()
	data, err := c.abi.Pack(method, args...)
	if err != nil {
		n.t.Fatal(err)
	}
	ret, err := n.c.CallContract(n.ctx(), ethereum.CallMsg{To: &c.addr, Data: data}, big.NewInt(block))
	if err != nil {
		n.t.Fatalf("%s.%s at %d: %v", c.name, method, block, err)
	}
	out, err := c.abi.Unpack(method, ret)
	if err != nil {
		n.t.Fatal(err)
	}
	return out[0]
}
