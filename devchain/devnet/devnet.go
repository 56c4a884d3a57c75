// Package devnet runs an in-process cosmos-sdk chain (bank, staking,
// distribution, gov) for offline `make run` and for end-to-end indexer tests.
//
// It is built on cosmos-sdk's testutil/network and inherits its limits:
//
//   - One network per process. testutil/network holds a package-wide mutex
//     from network.New until Cleanup; Start refuses a second network with
//     ErrAlreadyRunning instead of blocking on that mutex, and Close releases
//     it. Only the first validator serves the CometBFT RPC and REST API.
//   - Importing this package runs testutil/network's init, which reserves 200
//     loopback ports up front (listen and close); its P2P and ABCI-proxy ports
//     come from that pool and are never given back.
//   - network.New installs a SIGINT/SIGTERM handler that stops the network
//     and calls os.Exit(128+signal). A program that handles signals itself
//     (signal.NotifyContext) still sees that exit when the signal arrives
//     before Close. After Close that handler is parked (a second cleanup
//     would crash the process), so SIGINT no longer ends a program that has
//     no handler of its own.
//
// Every listen address (CometBFT RPC, P2P, REST API) is bound to 127.0.0.1,
// persistent peers are dialled on 127.0.0.1, PEX is off and gRPC is off, so
// the network makes no traffic beyond loopback. Accounts are derived from
// fixed mnemonics, so addresses are the same on every run.
package devnet

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cmtcfg "github.com/cometbft/cometbft/config"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/cosmos/cosmos-sdk/baseapp"
	"github.com/cosmos/cosmos-sdk/client"
	"github.com/cosmos/cosmos-sdk/crypto/hd"
	"github.com/cosmos/cosmos-sdk/crypto/keyring"
	"github.com/cosmos/cosmos-sdk/runtime"
	srvconfig "github.com/cosmos/cosmos-sdk/server/config"
	servertypes "github.com/cosmos/cosmos-sdk/server/types"
	"github.com/cosmos/cosmos-sdk/testutil/configurator"
	"github.com/cosmos/cosmos-sdk/testutil/network"
	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	govtypes "github.com/cosmos/cosmos-sdk/x/gov/types"
	govv1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1"
	"github.com/cosmos/go-bip39"

	"cosmossdk.io/depinject"
	sdkmath "cosmossdk.io/math"
	pruningtypes "cosmossdk.io/store/pruning/types"

	// Modules wired by appConfig, beyond the ones testutil/network imports.
	_ "github.com/cosmos/cosmos-sdk/x/distribution"
	_ "github.com/cosmos/cosmos-sdk/x/gov"
)

// Defaults applied by Start for zero Options fields.
const (
	// DefaultChainID is the chain ID when Options.ChainID is "".
	DefaultChainID = "chainlens-devnet"
	// DefaultBlockTime is the TimeoutCommit when Options.BlockTime is 0.
	DefaultBlockTime = 200 * time.Millisecond
)

// Governance of the devnet (genesis): a proposal's vote opens with a deposit
// of GovMinDeposit BondDenom and lasts GovVotingPeriod.
const (
	GovMinDeposit   = 1_000
	GovVotingPeriod = 3 * time.Second
)

// BondDenom is the staking and fee denomination of the devnet.
const BondDenom = "stake"

// UserCount is how many user accounts (user0, user1, …) Start funds in genesis.
const UserCount = 3

// UserFunds is each user account's genesis balance in BondDenom.
const UserFunds = 1_000_000_000

// ErrAlreadyRunning is returned by Start while another devnet (or any other
// testutil/network network) of this process has not been closed.
var ErrAlreadyRunning = errors.New("devnet: a network is already running in this process (testutil/network allows one)")

// ErrClosed is returned by methods called on, or interrupted by, a closed Net.
var ErrClosed = errors.New("devnet: network closed")

// active guards testutil/network's process-wide lock: Start fails fast
// instead of blocking inside network.New.
var active atomic.Bool

// Options configures Start. The zero value is a valid single-validator devnet.
type Options struct {
	// Validators is the number of validators (default 1). Only the first
	// serves RPC; each runs in this process.
	Validators int
	// BlockTime is CometBFT's TimeoutCommit (default 200ms).
	BlockTime time.Duration
	// RPCListen is the CometBFT RPC host:port, e.g. "127.0.0.1:26657"; it
	// must be a loopback address. "" or port 0 picks a free loopback port.
	RPCListen string
	// ChainID defaults to DefaultChainID.
	ChainID string
	// Dir holds the nodes' homes and keyrings; it must be empty or missing.
	// "" makes a temp dir that Close removes; a given Dir is left in place.
	Dir string
	// Log receives the devnet's logs; nil discards them.
	Log *slog.Logger
}

// Account is a key in the first validator's keyring, usable as a signer by
// Send, Delegate and WithdrawRewards.
type Account struct {
	// Name is the keyring name ("node0", "user0", …).
	Name string
	// Address is the bech32 account address.
	Address string
}

// Net is a running devnet. Its methods are safe for concurrent use; the
// transactions they send are serialised.
type Net struct {
	log       *slog.Logger
	tl        *tnLogger
	tn        *network.Network
	val       *network.Validator
	chainID   string
	blockTime time.Duration
	rpcURL    string
	apiURL    string
	dir       string
	removeDir bool
	accounts  []Account
	valopers  []string

	txMu      sync.Mutex
	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// appConfig is network.MinimumAppConfig plus x/distribution, which
// WithdrawRewards needs, and x/gov (community pool spends).
func appConfig() depinject.Config {
	return configurator.NewAppConfig(
		configurator.AuthModule(),
		configurator.ParamsModule(),
		configurator.BankModule(),
		configurator.GenutilModule(),
		configurator.StakingModule(),
		configurator.DistributionModule(),
		configurator.GovModule(),
		configurator.ConsensusModule(),
		configurator.TxModule(),
	)
}

// Start builds the genesis, starts the validators and returns once the first
// block is committed (about 1–2 s: network.New polls once a second). Only one
// Net may run per process (ErrAlreadyRunning). network.New itself does not
// take a context; ctx is checked around it.
func Start(ctx context.Context, opt Options) (_ *Net, err error) {
	if opt.Validators <= 0 {
		opt.Validators = 1
	}
	if opt.BlockTime <= 0 {
		opt.BlockTime = DefaultBlockTime
	}
	if opt.ChainID == "" {
		opt.ChainID = DefaultChainID
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("devnet: start: %w", err)
	}
	rpcAddr, err := loopbackAddr(opt.RPCListen)
	if err != nil {
		return nil, err
	}
	apiAddr, err := loopbackAddr("")
	if err != nil {
		return nil, err
	}

	if !active.CompareAndSwap(false, true) {
		return nil, ErrAlreadyRunning
	}
	guardHeld := true // until a Net exists, whose Close resets the guard
	defer func() {
		if err != nil && guardHeld {
			active.Store(false)
		}
	}()

	dir, removeDir, err := prepareDir(opt.Dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err == nil {
			return
		}
		if removeDir {
			_ = os.RemoveAll(dir)
			return
		}
		// The given Dir was empty: remove what this attempt wrote to it.
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}()

	cfg, users, err := newConfig(opt, rpcAddr, apiAddr)
	if err != nil {
		return nil, err
	}

	start := time.Now()
	tl := newTNLogger(opt.Log)
	tn, err := newNetwork(tl, dir, cfg)
	if err != nil {
		return nil, err
	}
	n := &Net{
		log:       opt.Log,
		tl:        tl,
		tn:        tn,
		val:       tn.Validators[0],
		chainID:   cfg.ChainID,
		blockTime: opt.BlockTime,
		rpcURL:    "http://" + rpcAddr,
		apiURL:    tn.Validators[0].APIAddress,
		dir:       dir,
		removeDir: removeDir,
		closed:    make(chan struct{}),
	}
	// From here on Close releases the lock and the guard.
	guardHeld = false
	fail := func(err error) (*Net, error) {
		return nil, errors.Join(err, n.Close())
	}
	if n.val.RPCClient == nil {
		return fail(errors.New("devnet: validator 0 has no RPC client"))
	}
	for _, v := range tn.Validators {
		n.accounts = append(n.accounts, Account{Name: v.Moniker, Address: v.Address.String()})
		n.valopers = append(n.valopers, v.ValAddress.String())
	}
	for _, u := range users {
		if _, err := n.val.ClientCtx.Keyring.NewAccount(u.Name, u.mnemonic, keyring.DefaultBIP39Passphrase,
			sdk.GetConfig().GetFullBIP44Path(), hd.Secp256k1); err != nil {
			return fail(fmt.Errorf("devnet: import key %s: %w", u.Name, err))
		}
		n.accounts = append(n.accounts, Account{Name: u.Name, Address: u.Address})
	}
	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("devnet: start: %w", err))
	}
	n.log.Info("devnet started", "chain_id", n.chainID, "rpc", n.rpcURL, "validators", len(n.valopers),
		"dir", dir, "took", time.Since(start).Round(time.Millisecond))
	return n, nil
}

// userKey is a genesis-funded user account and its mnemonic.
type userKey struct {
	Account
	mnemonic string
}

// newConfig returns the testutil/network configuration for opt and the user
// accounts it funds.
func newConfig(opt Options, rpcAddr, apiAddr string) (network.Config, []userKey, error) {
	appCfg := appConfig()
	cfg, err := network.DefaultConfigWithAppConfig(appCfg)
	if err != nil {
		return network.Config{}, nil, fmt.Errorf("devnet: app config: %w", err)
	}
	cfg.ChainID = opt.ChainID
	cfg.NumValidators = opt.Validators
	cfg.TimeoutCommit = opt.BlockTime
	cfg.BondDenom = BondDenom
	cfg.MinGasPrices = "0.000006" + BondDenom
	cfg.CleanupDir = false // Close removes the directory and reports errors
	cfg.EnableLogging = false
	cfg.RPCAddress = "tcp://" + rpcAddr
	cfg.APIAddress = "tcp://" + apiAddr
	cfg.GRPCAddress = "127.0.0.1:0" // gRPC is switched off in confineToLoopback
	// DefaultConfigWithAppConfig's constructor captured its own random chain
	// ID (baseapp.SetChainID), so InitChain would reject ours: build the app
	// here, after confining every listener to loopback.
	cfg.AppConstructor = newAppConstructor(appCfg, cfg.ChainID)

	cfg.Mnemonics = make([]string, opt.Validators)
	for i := range cfg.Mnemonics {
		if cfg.Mnemonics[i], err = mnemonicFor(fmt.Sprintf("node%d", i)); err != nil {
			return network.Config{}, nil, err
		}
	}

	kr := keyring.NewInMemory(cfg.Codec)
	users := make([]userKey, UserCount)
	addrs := make([]sdk.AccAddress, UserCount)
	for i := range users {
		name := fmt.Sprintf("user%d", i)
		m, err := mnemonicFor(name)
		if err != nil {
			return network.Config{}, nil, err
		}
		rec, err := kr.NewAccount(name, m, keyring.DefaultBIP39Passphrase, sdk.GetConfig().GetFullBIP44Path(), hd.Secp256k1)
		if err != nil {
			return network.Config{}, nil, fmt.Errorf("devnet: derive %s: %w", name, err)
		}
		if addrs[i], err = rec.GetAddress(); err != nil {
			return network.Config{}, nil, fmt.Errorf("devnet: derive %s: %w", name, err)
		}
		users[i] = userKey{Account: Account{Name: name, Address: addrs[i].String()}, mnemonic: m}
	}
	if err := fundGenesis(&cfg, addrs, sdk.NewCoins(sdk.NewCoin(BondDenom, sdkmath.NewInt(UserFunds)))); err != nil {
		return network.Config{}, nil, err
	}
	if err := shortGovernance(&cfg); err != nil {
		return network.Config{}, nil, err
	}
	return cfg, users, nil
}

// mnemonicFor derives a fixed 24-word mnemonic from name, so the devnet's
// addresses are the same on every run. Devnet keys only: they are public.
func mnemonicFor(name string) (string, error) {
	entropy := sha256.Sum256([]byte("chainlens-devnet/" + name))
	m, err := bip39.NewMnemonic(entropy[:])
	if err != nil {
		return "", fmt.Errorf("devnet: mnemonic for %s: %w", name, err)
	}
	return m, nil
}

// shortGovernance makes proposals quick to decide: a deposit of
// GovMinDeposit opens the vote, which lasts GovVotingPeriod.
func shortGovernance(cfg *network.Config) error {
	var gen govv1.GenesisState
	if err := cfg.Codec.UnmarshalJSON(cfg.GenesisState[govtypes.ModuleName], &gen); err != nil {
		return fmt.Errorf("devnet: gov genesis: %w", err)
	}
	vp, evp := GovVotingPeriod, GovVotingPeriod/2
	gen.Params.VotingPeriod, gen.Params.ExpeditedVotingPeriod = &vp, &evp
	gen.Params.MinDeposit = sdk.NewCoins(sdk.NewCoin(BondDenom, sdkmath.NewInt(GovMinDeposit)))
	gen.Params.ExpeditedMinDeposit = sdk.NewCoins(sdk.NewCoin(BondDenom, sdkmath.NewInt(2*GovMinDeposit)))
	var err error
	if cfg.GenesisState[govtypes.ModuleName], err = cfg.Codec.MarshalJSON(&gen); err != nil {
		return fmt.Errorf("devnet: gov genesis: %w", err)
	}
	return nil
}

// fundGenesis adds base accounts holding coins for addrs to cfg's genesis.
func fundGenesis(cfg *network.Config, addrs []sdk.AccAddress, coins sdk.Coins) error {
	var authGen authtypes.GenesisState
	if err := cfg.Codec.UnmarshalJSON(cfg.GenesisState[authtypes.ModuleName], &authGen); err != nil {
		return fmt.Errorf("devnet: auth genesis: %w", err)
	}
	var bankGen banktypes.GenesisState
	if err := cfg.Codec.UnmarshalJSON(cfg.GenesisState[banktypes.ModuleName], &bankGen); err != nil {
		return fmt.Errorf("devnet: bank genesis: %w", err)
	}
	accs := make([]authtypes.GenesisAccount, 0, len(addrs))
	for _, a := range addrs {
		accs = append(accs, authtypes.NewBaseAccount(a, nil, 0, 0))
		bankGen.Balances = append(bankGen.Balances, banktypes.Balance{Address: a.String(), Coins: coins})
	}
	packed, err := authtypes.PackAccounts(accs)
	if err != nil {
		return fmt.Errorf("devnet: auth genesis: %w", err)
	}
	authGen.Accounts = append(authGen.Accounts, packed...)
	if cfg.GenesisState[authtypes.ModuleName], err = cfg.Codec.MarshalJSON(&authGen); err != nil {
		return fmt.Errorf("devnet: auth genesis: %w", err)
	}
	if cfg.GenesisState[banktypes.ModuleName], err = cfg.Codec.MarshalJSON(&bankGen); err != nil {
		return fmt.Errorf("devnet: bank genesis: %w", err)
	}
	return nil
}

// newAppConstructor builds each validator's app like
// network.DefaultConfigWithAppConfig does, with chainID, after rewriting the
// validator's listen addresses to loopback. network.New calls it after it has
// chosen the addresses and before anything listens, which is the only hook
// it offers; the constructor cannot return an error, so it panics and
// newNetwork recovers.
func newAppConstructor(appCfg depinject.Config, chainID string) network.AppConstructor {
	return func(val network.ValidatorI) servertypes.Application {
		if err := confineToLoopback(val.GetCtx().Config, val.GetAppConfig()); err != nil {
			panic(err)
		}
		var builder *runtime.AppBuilder
		if err := depinject.Inject(depinject.Configs(appCfg, depinject.Supply(val.GetCtx().Logger)), &builder); err != nil {
			panic(fmt.Errorf("devnet: build app: %w", err))
		}
		app := builder.Build(dbm.NewMemDB(), nil,
			baseapp.SetPruning(pruningtypes.NewPruningOptionsFromString(val.GetAppConfig().Pruning)),
			baseapp.SetMinGasPrices(val.GetAppConfig().MinGasPrices),
			baseapp.SetChainID(chainID),
		)
		if err := app.Load(true); err != nil {
			panic(fmt.Errorf("devnet: load app: %w", err))
		}
		return app
	}
}

// confineToLoopback rewrites the 0.0.0.0 addresses testutil/network chose to
// 127.0.0.1, turns off what could listen or dial elsewhere, and checks that
// every remaining address is loopback.
func confineToLoopback(c *cmtcfg.Config, a *srvconfig.Config) error {
	lo := func(s string) string { return strings.ReplaceAll(s, "0.0.0.0", "127.0.0.1") }
	c.RPC.ListenAddress = lo(c.RPC.ListenAddress)
	c.RPC.GRPCListenAddress = ""
	c.RPC.PprofListenAddress = ""
	c.P2P.ListenAddress = lo(c.P2P.ListenAddress)
	c.P2P.ExternalAddress = ""
	c.P2P.PersistentPeers = lo(c.P2P.PersistentPeers)
	c.P2P.Seeds = ""
	c.P2P.PexReactor = false
	c.ProxyApp = lo(c.ProxyApp)
	c.Instrumentation.Prometheus = false
	a.API.Address = lo(a.API.Address)
	a.GRPC.Enable = false
	a.GRPC.Address = lo(a.GRPC.Address)
	a.GRPCWeb.Enable = false
	a.Telemetry.Enabled = false

	addrs := map[string]string{
		"rpc.laddr": c.RPC.ListenAddress, "p2p.laddr": c.P2P.ListenAddress,
		"proxy_app": c.ProxyApp, "api.address": a.API.Address,
	}
	for i, p := range strings.Split(c.P2P.PersistentPeers, ",") {
		if p != "" {
			_, hostPort, _ := strings.Cut(p, "@")
			addrs[fmt.Sprintf("p2p.persistent_peers[%d]", i)] = hostPort
		}
	}
	for name, addr := range addrs {
		if addr == "" {
			continue
		}
		if err := checkLoopback(addr); err != nil {
			return fmt.Errorf("devnet: %s: %w", name, err)
		}
	}
	return nil
}

// checkLoopback accepts "host:port" or "scheme://host:port" with a loopback host.
func checkLoopback(addr string) error {
	hostPort := addr
	if _, rest, ok := strings.Cut(addr, "://"); ok {
		hostPort = rest
	}
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q is not loopback", addr)
	}
	return nil
}

// loopbackAddr validates a loopback host:port, or picks a free port for ""
// (127.0.0.1) or port 0.
func loopbackAddr(addr string) (string, error) {
	host := "127.0.0.1"
	if addr != "" {
		if err := checkLoopback(addr); err != nil {
			return "", fmt.Errorf("devnet: RPCListen: %w", err)
		}
		addr = strings.TrimPrefix(addr, "tcp://")
		h, port, err := net.SplitHostPort(addr)
		if err != nil {
			return "", fmt.Errorf("devnet: RPCListen: %w", err)
		}
		if port != "0" {
			return addr, nil
		}
		host = h
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("devnet: free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return "", fmt.Errorf("devnet: free port: %w", err)
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// prepareDir returns the directory to use and whether Close must remove it.
func prepareDir(dir string) (string, bool, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "chainlens-devnet-*")
		if err != nil {
			return "", false, fmt.Errorf("devnet: temp dir: %w", err)
		}
		return d, true, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, fmt.Errorf("devnet: dir: %w", err)
	}
	// testutil/network would pick up gentxs and keys left by an earlier run.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false, fmt.Errorf("devnet: dir: %w", err)
	}
	if len(entries) > 0 {
		return "", false, fmt.Errorf("devnet: dir %s is not empty", dir)
	}
	return dir, false, nil
}

// newNetwork calls network.New, turning a panic into an error. network.New
// takes its process-wide lock first and keeps it on every error path, so on
// failure the lock is released through a Cleanup of an empty Network (its
// only effect then: a 100 ms sleep and the unlock). Validators that had
// already started before the failure cannot be reached and keep running.
func newNetwork(tl *tnLogger, dir string, cfg network.Config) (tn *network.Network, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("devnet: testutil/network panicked: %v", r)
		}
		if err != nil {
			(&network.Network{Logger: newTNLogger(tl.log)}).Cleanup()
		}
	}()
	tn, err = network.New(tl, dir, cfg)
	if err != nil {
		return nil, fmt.Errorf("devnet: start network: %w", err)
	}
	if len(tn.Validators) == 0 {
		return nil, errors.New("devnet: network has no validators")
	}
	return tn, nil
}

// RPCURL is the CometBFT RPC endpoint, http://127.0.0.1:PORT.
func (n *Net) RPCURL() string { return n.rpcURL }

// APIURL is the cosmos-sdk REST API endpoint, http://127.0.0.1:PORT.
func (n *Net) APIURL() string { return n.apiURL }

// ChainID is the chain's ID.
func (n *Net) ChainID() string { return n.chainID }

// Bech32Prefix is the account address prefix ("cosmos").
func (n *Net) Bech32Prefix() string { return sdk.GetConfig().GetBech32AccountAddrPrefix() }

// Dir is the directory holding the nodes' homes and keyrings.
func (n *Net) Dir() string { return n.dir }

// Accounts lists the keys usable as signers: the validators' accounts
// (node0, …) then the genesis-funded users (user0, …).
func (n *Net) Accounts() []Account { return append([]Account(nil), n.accounts...) }

// Validators lists the validators' operator addresses (cosmosvaloper…).
func (n *Net) Validators() []string { return append([]string(nil), n.valopers...) }

// ClientContext is the first validator's client context: codec, keyring and
// an in-process RPC client, for module query clients (banktypes.NewQueryClient
// and the like); WithHeight queries past heights (nothing is pruned).
func (n *Net) ClientContext() client.Context { return n.val.ClientCtx }

// Height is the latest committed block height.
func (n *Net) Height(ctx context.Context) (int64, error) {
	st, err := n.val.RPCClient.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("devnet: status: %w", err)
	}
	return st.SyncInfo.LatestBlockHeight, nil
}

// WaitForHeight waits until block h is committed, ctx ends or n is closed.
func (n *Net) WaitForHeight(ctx context.Context, h int64) error {
	t := time.NewTicker(n.pollInterval())
	defer t.Stop()
	for {
		select {
		case <-n.closed:
			return ErrClosed
		default:
		}
		cur, err := n.Height(ctx)
		if err == nil && cur >= h {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devnet: wait for height %d (at %d): %w", h, cur, ctx.Err())
		case <-n.closed:
			return ErrClosed
		case <-t.C:
		}
	}
}

func (n *Net) pollInterval() time.Duration {
	return min(max(n.blockTime/4, 10*time.Millisecond), 100*time.Millisecond)
}

// Close stops the validators, releases testutil/network's process lock and
// removes the temp dir Start made. It is idempotent; later calls return the
// first call's result. A transaction in flight fails with ErrClosed.
func (n *Net) Close() error {
	n.closeOnce.Do(func() {
		close(n.closed)
		n.txMu.Lock() // wait for an in-flight transaction to notice
		defer n.txMu.Unlock()
		if n.tl.claimCleanup() {
			n.tn.Cleanup()
		} else {
			<-n.tl.done // the signal handler's Cleanup; os.Exit follows it
		}
		errs := []error{n.tl.err()}
		if n.removeDir {
			if err := os.RemoveAll(n.dir); err != nil {
				errs = append(errs, fmt.Errorf("devnet: remove %s: %w", n.dir, err))
			}
		}
		n.closeErr = errors.Join(errs...)
		active.Store(false)
		n.log.Info("devnet stopped", "chain_id", n.chainID, "err", n.closeErr)
	})
	return n.closeErr
}
