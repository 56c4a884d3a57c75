// Package osmosistest indexes the recorded Osmosis localnet
// (testdata/localnet/osmosis) into a test database through the replay node
// and the real indexer, for the dex packages' tests.
package osmosistest

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/replaytest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// The recorded localnet: chain id, last height and the block time of that height.
const (
	ChainID    = "localosmosis"
	LastHeight = 299
)

// Dir is the folder of the recording.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "localnet", "osmosis")
}

// Chain is the config of the localnet chain served at rpc, with asset
// metadata for its denoms (uusdc is the USD anchor).
func Chain(rpc string) config.Chain {
	return config.Chain{ID: ChainID, Kind: osmosis.Kind, RPC: []string{rpc}, BatchSize: 20, Concurrency: 2,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: "osmo",
		Assets: []config.Asset{
			{Denom: "uosmo", Symbol: "OSMO", Name: "Osmosis", Display: "osmo", Exponent: 6, Logo: "https://example.test/osmo.png"},
			{Denom: "uusdc", Symbol: "USDC", Name: "USD Coin", Display: "usdc", Exponent: 6, Logo: "https://example.test/usdc.png"},
			{Denom: "uatom", Symbol: "ATOM", Name: "Cosmos Hub", Display: "atom", Exponent: 6},
			{Denom: "uweth", Symbol: "WETH", Name: "Wrapped Ether", Display: "weth", Exponent: 6},
		}}
}

// Index indexes heights 1..299 of the recording into db and returns the
// chain config used.
func Index(t testing.TB, db *bun.DB) config.Chain {
	t.Helper()
	return replaytest.Index(t, db, Dir(), Chain(""), osmosis.NewAdapter("osmo"), LastHeight)
}

// New returns a new test database holding heights 1..299 of the recording,
// indexed through the real indexer once per test server (testdb.NewFrom),
// and the chain config (without an rpc: nothing serves the recording).
func New(t testing.TB) (*bun.DB, config.Chain) {
	t.Helper()
	db := testdb.NewFrom(t, "osmosis_localnet", func(db *bun.DB) { Index(t, db) })
	return db, Chain("")
}
