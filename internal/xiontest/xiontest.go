// Package xiontest indexes the recorded XION localnet
// (testdata/localnet/xion, smart accounts, authz and feegrant) for tests.
package xiontest

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
	ChainID    = "localxion"
	LastHeight = 141
)

// Dir is the recording folder.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "localnet", "xion")
}

// Chain is the config of the recording.
func Chain() config.Chain {
	return config.Chain{ID: ChainID, Kind: "xion", BatchSize: 50, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: "xion"}
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
