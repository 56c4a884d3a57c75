// Package evmtest serves the recorded go-ethereum devnet
// (testdata/evm/recorded, a copy of the shared evm-devnet recording) to
// tests, with the chain config that indexes it.
package evmtest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/evmreplay"
	"github.com/chainlens/chainlens/indexer"
	evmindexer "github.com/chainlens/chainlens/indexer/evm"
	"github.com/chainlens/chainlens/internal/testdb"
)

// ChainID is the id the recorded devnet (EVM chain 1337) is indexed under:
// it stands in for BNB Smart Chain, so its rows can be selected by the
// stablecoin group's chain_id values; its CCTP flows go to and come from
// the other supported chains (domains 0, 1, 2, 3, 6, 7), never BNB's own.
const ChainID = "binance-smart-chain-56"

// LastHeight is the recording's last block.
const LastHeight = 311

// Contract addresses of the recording (contracts/deployments.json).
const (
	USDC               = "0xd87f14a1b784f5eda472997fd01530c7f60f4781"
	USDT               = "0x6bb8638d1c03436250512714267d97240d3cb9a3"
	DAI                = "0xee336279115e702f2b90c1e3b4be2dfd4ca6f857"
	TokenMessenger     = "0xccaf246d41dd7d3a45265e3e0adf2d131b1900fc"
	MessageTransmitter = "0x01e771e1c5474755b3460d6686006a0a428e03dc"
	// TetherTreasury deployed the USDT-like token and owns it throughout.
	TetherTreasury = "0x2606c83176d7b1433580e9ca0a5602c278d3d169"
	// BridgeEscrow is the lock-and-mint bridge's escrow account.
	BridgeEscrow = "0xb3743486f5263892abf297ea26c779a4907a66eb"
)

// Dir is the recording folder.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "evm", "recorded")
}

// Chain is the config of the recorded devnet: its three tokens, its CCTP
// contracts and the categories of labels.json (exchange → cex; dex; bridge).
func Chain(rpcURL string) config.Chain {
	return config.Chain{
		ID: ChainID, Kind: "evm", EVMChainID: 1337, RPC: []string{rpcURL},
		BatchSize: 100, Concurrency: 2, PollInterval: config.Duration(20 * time.Millisecond),
		Tokens: []config.Token{
			{Address: USDC, Symbol: "USDC", Name: "USD Coin", Decimals: 6},
			{Address: USDT, Symbol: "USDT", Name: "Tether USD", Decimals: 6, Owner: TetherTreasury},
			{Address: DAI, Symbol: "DAI", Name: "Dai Stablecoin", Decimals: 18},
		},
		CCTP: &config.CCTP{TokenMessenger: TokenMessenger, MessageTransmitter: MessageTransmitter},
		AddressLabels: map[string]string{
			"0x8fa6b5a7aefa73b4adf58bb4b996e068b0bf6d5f": "cex", // exchange A hot wallet
			"0x66f067033abb43bf800b9b5a081dea68e368597f": "cex", // exchange B hot wallet
			"0x23122576db8d354578b8f2404e1a7a8bbd0d728b": "dex", // pool USDC/USDT
			"0xfe100cc13da89077495016aaf3448d6ac6262ee5": "dex", // pool DAI/USDC
			BridgeEscrow:       "bridge",
			MessageTransmitter: "bridge",
			TokenMessenger:     "bridge",
		},
	}
}

// Start serves the recording on a loopback port until the test ends and
// returns its URL.
func Start(t testing.TB, opt evmreplay.Options) string {
	t.Helper()
	rec, err := evmreplay.Load(Dir())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(evmreplay.New(rec, opt).Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// Index starts the recorded devnet's replay node and indexes it through
// LastHeight (no confirmations) into a new test database.
func Index(t testing.TB) (*bun.DB, config.Chain) {
	t.Helper()
	db, _ := testdb.New(t)
	return db, IndexInto(t, db, Chain(Start(t, evmreplay.Options{})))
}

// IndexInto indexes the recording served at ch.RPC[0] through LastHeight
// (no confirmations) into db with ch's settings, and returns them.
func IndexInto(t testing.TB, db *bun.DB, ch config.Chain) config.Chain {
	t.Helper()
	ch.Confirmations = 0
	client, err := ethclient.Dial(ch.RPC[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	m, _ := indexer.NewMetrics(nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := evmindexer.New(ch, db, []*ethclient.Client{client}, slog.New(slog.DiscardHandler), m).Run(ctx, LastHeight); err != nil {
		t.Fatal(err)
	}
	return ch
}
