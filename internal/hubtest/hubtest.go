// Package hubtest indexes the recorded Cosmos Hub localnet
// (testdata/localnet/cosmoshub, staking and x/liquid) for tests.
package hubtest

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

// ChainID and LastHeight of the recording.
const (
	ChainID    = "localcosmos"
	LastHeight = 169
)

// Dir is the recording folder.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "localnet", "cosmoshub")
}

// Chain is the config of the recording.
func Chain() config.Chain {
	return config.Chain{ID: ChainID, Kind: "cosmoshub", BatchSize: 50, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: "cosmos"}
}

// Index indexes the whole recording into db through the real pipeline.
func Index(t testing.TB, db *bun.DB) config.Chain {
	t.Helper()
	cfg := Chain()
	ad, err := kinds.Adapter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return replaytest.Index(t, db, Dir(), cfg, ad, LastHeight)
}

// Truth decodes truth/<name>.
func Truth(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), "truth", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// Providers are the liquid-staking providers of the recording
// (providers.json), by the provider names of the staking group.
func Providers() map[string][]string {
	return map[string][]string{
		"stride":      {"cosmos1m8nflc0uw0gwxphasy9k8gdl56n3neq9wt2vdl"},
		"pstake":      {"cosmos1qaffpu7zck6u25wltlk9mzwm5jhmzcje58ey2m"},
		"quicksilver": {"cosmos147eelyh9gfhmyfz8jhn4xuehva9feaphnyy8hw"},
		"drop":        {"cosmos1p6hls2jwel54f6gz6eansemazpnzjf3zzg2g3f"},
	}
}
