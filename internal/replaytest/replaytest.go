// Package replaytest indexes a recorded localnet (testdata/localnet/<name>)
// into a test database: the replay node serves the recording over HTTP on
// loopback and the real indexer reads it.
package replaytest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
)

// Index serves the recording in dir, points cfg at it (cfg.RPC is
// replaced), indexes heights up to last with adapter and returns cfg.
func Index(t testing.TB, db *bun.DB, dir string, cfg config.Chain, adapter chains.Adapter, last int64) config.Chain {
	t.Helper()
	rec, err := replaynode.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return IndexSource(t, db, rec, replaynode.Options{}, cfg, adapter, last)
}

// IndexSource indexes heights up to last of a chain served by a replay
// node over src (a recording or a generated chain) with the real indexer.
func IndexSource(t testing.TB, db *bun.DB, src replaynode.Source, opt replaynode.Options, cfg config.Chain, adapter chains.Adapter, last int64) config.Chain {
	t.Helper()
	srv := httptest.NewServer(replaynode.New(src, opt).Handler())
	t.Cleanup(srv.Close)
	cfg.RPC = []string{srv.URL}
	client, err := cometbft.New(cfg.RPC, cometbft.Retry{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), adapter, slog.New(slog.DiscardHandler), m)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := x.Run(ctx, last); err != nil {
		t.Fatal(err)
	}
	return cfg
}
