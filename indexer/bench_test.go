package indexer

import (
	"bufio"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// loadRaw reads a recording's /block and /block_results results into memory.
func loadRaw(b testing.TB, name, chainID string) []chains.RawBlock {
	b.Helper()
	dir := filepath.Join("..", "testdata", "localnet", name)
	blocks := readResults(b, filepath.Join(dir, "blocks.jsonl.gz"))
	results := readResults(b, filepath.Join(dir, "block_results.jsonl.gz"))
	out := make([]chains.RawBlock, len(blocks))
	for i := range blocks {
		out[i] = chains.RawBlock{ChainID: chainID, Height: int64(i + 1), Block: blocks[i], Results: results[i]}
	}
	return out
}

func readResults(b testing.TB, path string) []json.RawMessage {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out []json.RawMessage
	for sc.Scan() {
		var env struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &env); err != nil {
			b.Fatal(err)
		}
		out = append(out, env.Result)
	}
	return out
}

// cpuTimes reads the machine's CPU seconds (all states) and those stolen by
// the hypervisor: on a shared VM, steal is what makes a run slow.
func cpuTimes(b testing.TB) (all, steal float64) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		b.Fatal(err)
	}
	st, err := fs.Stat()
	if err != nil {
		b.Fatal(err)
	}
	t := st.CPUTotal
	return t.User + t.Nice + t.System + t.Idle + t.Iowait + t.IRQ + t.SoftIRQ + t.Steal, t.Steal
}

func maxRSSMB() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024
}

// memSource serves recorded heights from memory, so a benchmark measures
// the indexer's own pipeline (parallel decode, ordered COPY commits)
// without HTTP.
type memSource struct {
	chainID string
	raws    []chains.RawBlock
}

func (m memSource) Status(context.Context) (cometbft.Status, error) {
	return cometbft.Status{Network: m.chainID, Version: "0.38.22", LatestHeight: int64(len(m.raws)), EarliestHeight: 1}, nil
}
func (m memSource) Block(_ context.Context, h int64) ([]byte, error) { return m.raws[h-1].Block, nil }
func (m memSource) BlockResults(_ context.Context, h, _ int64) (cometbft.Answer, error) {
	return cometbft.Answer{Result: m.raws[h-1].Results, Size: int64(len(m.raws[h-1].Results))}, nil
}

// BenchmarkIngest replays recorded real heights from memory through the
// indexer's pipeline (decode and adapt on Concurrency workers, COPY plus
// checkpoint per 20 heights), then COPYs the very same rows raw into
// emptied tables in the same run, and reports the ratio of throughputs.
func BenchmarkIngest(b *testing.B) {
	for _, name := range []struct{ dir, chainID, kind, prefix string }{
		{"osmosis", "localosmosis", "osmosis", "osmo"},
		{"dydx", "localdydxprotocol", "dydx", "dydx"},
	} {
		b.Run(name.dir, func(b *testing.B) {
			ctx := context.Background()
			db, _ := testdb.New(b)
			raws := loadRaw(b, name.dir, name.chainID)
			// The generic adapter (the generic rows) with the chain's own
			// descriptors: every message is decoded.
			adapter := cosmos.NewAdapter(name.kind, name.prefix, name.dir)
			m, _ := NewMetrics(nil)
			cfg := config.Chain{ID: name.chainID, Kind: name.kind, RPC: []string{"http://memory"}, BatchSize: 100, Concurrency: 4,
				PollInterval: config.Duration(time.Millisecond), Bech32Prefix: name.prefix}

			// The rows the pipeline writes, built once for the raw COPY.
			all := chains.NewRows()
			var events int64
			for _, r := range raws {
				blk, err := adapter.Decode(r, chains.AttrAuto)
				if err != nil {
					b.Fatal(err)
				}
				if err := rawRows(blk, all, nil); err != nil {
					b.Fatal(err)
				}
				if err := adapter.Rows(blk, all); err != nil {
					b.Fatal(err)
				}
				events += int64(countEvents(blk))
			}
			tables := newWriter(db, name.chainID, name.kind, adapter.Tables()).tables
			var rows int64
			for _, t := range tables {
				rows += int64(len(all.Of(t.Name)))
			}

			var pipeline, copyOnly time.Duration
			all0, steal0 := cpuTimes(b)
			for b.Loop() {
				truncateAll(b, db)
				x := NewCosmos(cfg, db, memSource{name.chainID, raws}, adapter, slog.New(slog.DiscardHandler), m)
				start := time.Now()
				if err := x.Run(ctx, int64(len(raws))); err != nil {
					b.Fatal(err)
				}
				pipeline += time.Since(start)

				truncateAll(b, db)
				conn, err := db.Conn(ctx)
				if err != nil {
					b.Fatal(err)
				}
				start = time.Now()
				for _, t := range tables {
					if _, err := store.CopyRows(ctx, conn, t.Name, t.Columns, all.Of(t.Name)); err != nil {
						b.Fatal(err)
					}
				}
				copyOnly += time.Since(start)
				conn.Close()
			}
			all1, steal1 := cpuTimes(b)
			n := float64(b.N)
			b.ReportMetric(100*(steal1-steal0)/max(all1-all0, 1e-9), "steal_%")
			b.ReportMetric(n*float64(len(raws))/pipeline.Seconds(), "blocks/s")
			b.ReportMetric(n*float64(events)/pipeline.Seconds(), "events/s")
			b.ReportMetric(n*float64(rows)/pipeline.Seconds(), "rows/s")
			b.ReportMetric(copyOnly.Seconds()/pipeline.Seconds(), "x_raw_copy")
			b.ReportMetric(maxRSSMB(), "maxRSS_MB")
		})
	}
}

// slowHandler adds a fixed latency to every request, like a node across a network.
type slowHandler struct {
	next  http.Handler
	delay time.Duration
}

func (s slowHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(s.delay)
	s.next.ServeHTTP(w, r)
}

// BenchmarkCatchUp compares the indexer's parallel catch-up from a replay
// node answering with 5 ms latency to a sequential fetch of the same
// heights (block then block_results, one height at a time).
func BenchmarkCatchUp(b *testing.B) {
	rec, err := replaynode.Load(filepath.Join("..", "testdata", "localnet", "osmosis"))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(slowHandler{replaynode.New(rec, replaynode.Options{}).Handler(), 5 * time.Millisecond})
	defer srv.Close()
	db, _ := testdb.New(b)
	client, _ := cometbft.New([]string{srv.URL}, cometbft.Retry{}, nil)
	m, _ := NewMetrics(nil)
	ctx := context.Background()
	last := rec.LastHeight()
	var parallel, sequential time.Duration
	for i := 0; b.Loop(); i++ {
		truncateAll(b, db)
		cfg := config.Chain{ID: rec.ChainID(), Kind: "osmosis", RPC: []string{srv.URL}, BatchSize: 20, Concurrency: 8,
			PollInterval: config.Duration(10 * time.Millisecond), Bech32Prefix: "osmo"}
		x := NewCosmos(cfg, db, NewClientSource(client), cosmos.NewAdapter("osmosis", "osmo"), slog.New(slog.DiscardHandler), m)
		start := time.Now()
		if err := x.Run(ctx, last); err != nil {
			b.Fatal(err)
		}
		parallel += time.Since(start)

		start = time.Now()
		for h := int64(1); h <= last; h++ {
			if _, err := client.Block(ctx, h); err != nil {
				b.Fatal(err)
			}
			if _, err := client.BlockResults(ctx, h); err != nil {
				b.Fatal(err)
			}
		}
		sequential += time.Since(start)
	}
	b.ReportMetric(float64(last*int64(b.N))/parallel.Seconds(), "indexed_blocks/s")
	b.ReportMetric(float64(last*int64(b.N))/sequential.Seconds(), "sequential_fetch_blocks/s")
	b.ReportMetric(sequential.Seconds()/parallel.Seconds(), "speedup")
}

func truncateAll(b *testing.B, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}) {
	b.Helper()
	tables := []string{"sync_state", "dead_letters"}
	for _, t := range append(rawTables, cosmos.NewAdapter("cosmos", "cosmos").Tables()...) {
		tables = append(tables, t.Name)
	}
	if _, err := db.ExecContext(context.Background(), "TRUNCATE "+strings.Join(tables, ", ")); err != nil {
		b.Fatal(err)
	}
}
