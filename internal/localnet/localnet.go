// Package localnet indexes the recorded localnets of testdata/localnet
// (real node software of each chain family, with the node's own query
// results in truth/) for tests.
package localnet

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/kinds"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/replaytest"
)

// Recording is one recorded localnet.
type Recording struct {
	Folder     string // under testdata/localnet
	ChainID    string
	Kind       string
	Prefix     string
	LastHeight int64
	Assets     []config.Asset
}

// The recordings.
var (
	Neutron = Recording{Folder: "neutron", ChainID: "localneutron", Kind: "neutron", Prefix: "neutron", LastHeight: 193,
		Assets: []config.Asset{ // as config/local.yaml declares them
			{Denom: "untrn", Symbol: "NTRN", Name: "Neutron", Display: "ntrn", Exponent: 6, MarketDataID: "neutron"},
			{Denom: "uibcatom", Symbol: "ATOM", Name: "Cosmos Hub", Display: "atom", Exponent: 6, MarketDataID: "cosmos"},
			{Denom: "uibcusdc", Symbol: "USDC", Name: "USD Coin", Display: "usdc", Exponent: 6, MarketDataID: "usd-coin"},
			{Denom: "uusdc", Symbol: "USDC", Name: "USD Coin", Display: "usdc", Exponent: 6, MarketDataID: "usd-coin"},
		}}
	XION = Recording{Folder: "xion", ChainID: "localxion", Kind: "xion", Prefix: "xion", LastHeight: 141}
	Hub  = Recording{Folder: "cosmoshub", ChainID: "localcosmos", Kind: "cosmoshub", Prefix: "cosmos", LastHeight: 169}
)

// Dir is the recording folder.
func (r Recording) Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "localnet", r.Folder)
}

// Chain is the config that indexes the recording.
func (r Recording) Chain() config.Chain {
	return config.Chain{ID: r.ChainID, Kind: r.Kind, BatchSize: 50, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: r.Prefix, Assets: r.Assets}
}

// Index indexes the whole recording into db through the real pipeline,
// with the chain kind's adapter.
func (r Recording) Index(t testing.TB, db *bun.DB) config.Chain {
	t.Helper()
	cfg := r.Chain()
	ad, err := kinds.Adapter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return replaytest.Index(t, db, r.Dir(), cfg, ad, r.LastHeight)
}

// Truth decodes truth/<name> of the recording.
func (r Recording) Truth(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir(), "truth", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// HubProviders are the liquid-staking providers of the Hub recording
// (providers.json), by the staking group's provider names.
func HubProviders() map[string][]string {
	return map[string][]string{
		"stride":      {"cosmos1m8nflc0uw0gwxphasy9k8gdl56n3neq9wt2vdl"},
		"pstake":      {"cosmos1qaffpu7zck6u25wltlk9mzwm5jhmzcje58ey2m"},
		"quicksilver": {"cosmos147eelyh9gfhmyfz8jhn4xuehva9feaphnyy8hw"},
		"drop":        {"cosmos1p6hls2jwel54f6gz6eansemazpnzjf3zzg2g3f"},
	}
}
