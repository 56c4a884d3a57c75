package golden_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/kinds"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/evmreplay"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
	"github.com/chainlens/chainlens/internal/evmtest"
	"github.com/chainlens/chainlens/internal/localnet"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/replaytest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// recordings are the localnets indexed, by chain id of config/local.yaml.
var recordings = map[string]struct {
	folder string
	last   int64
}{
	"localosmosis":      {"osmosis", osmosistest.LastHeight},
	"localdydxprotocol": {"dydx", dydxtest.LastHeight},
	"localneutron":      {localnet.Neutron.Folder, localnet.Neutron.LastHeight},
	"localxion":         {localnet.XION.Folder, localnet.XION.LastHeight},
	"localcosmos":       {localnet.Hub.Folder, localnet.Hub.LastHeight},
}

// localConfig is config/local.yaml with the chains of a recording only, as
// they are indexed here (the replay nodes answer at once; the EVM devnet is
// read without confirmations), and the response cache off.
func localConfig(t testing.TB) *config.Config {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "local.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(raw, filepath.Join("..", "..", "config"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var chains []config.Chain
	for _, ch := range cfg.Chains {
		switch {
		case ch.Kind == "evm":
			ch.Confirmations = 0
		case recordings[ch.ID].folder != "":
			ch.PollInterval = config.Duration(20 * time.Millisecond)
		default:
			continue
		}
		chains = append(chains, ch)
	}
	cfg.Chains = chains
	cfg.API.CacheTTL = 0
	return cfg
}

// indexed returns a new database holding every recording indexed through
// the real indexer with the settings of localConfig and every aggregator
// job run once, and that config. The tests of this package share one build
// (a template database) and each gets its own copy, free to change.
func indexed(t testing.TB) (*bun.DB, *config.Config) {
	t.Helper()
	cfg := localConfig(t)
	db := testdb.NewFrom(t, "golden", func(db *bun.DB) { indexInto(t, db, cfg) })
	return db, cfg
}

// indexInto indexes every chain of cfg from its recording and runs every
// aggregator job once.
func indexInto(t testing.TB, db *bun.DB, cfg *config.Config) {
	t.Helper()
	for _, ch := range cfg.Chains {
		if ch.Kind == "evm" {
			ch.RPC = []string{evmtest.Start(t, evmreplay.Options{})}
			evmtest.IndexInto(t, db, ch)
			continue
		}
		rec := recordings[ch.ID]
		ad, err := kinds.Adapter(ch)
		if err != nil {
			t.Fatal(err)
		}
		replaytest.Index(t, db, filepath.Join("..", "..", "testdata", "localnet", rec.folder), ch, ad, rec.last)
	}
	apitest.RunJobs(t, db, cfg)
}

// clockAfter is the fixed clock of the tests that serve the indexed
// recordings: the minute after the last block of any chain in db.
func clockAfter(t testing.TB, db bun.IDB) time.Time {
	t.Helper()
	var now time.Time
	if err := db.NewRaw("SELECT max(time) FROM blocks").Scan(context.Background(), &now); err != nil {
		t.Fatal(err)
	}
	return now.Add(time.Minute).Truncate(time.Minute).UTC()
}
