package indexer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/internal/testdb"

	"log/slog"
	"path/filepath"
)

// faultProxy sits in front of a node and breaks requests in every way a
// real RPC provider does: 500s, 429s, truncated JSON, connection resets and
// answers slower than the client's timeout.
type faultProxy struct {
	next   http.Handler
	n      atomic.Int64
	faults atomic.Int64
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := p.n.Add(1)
	switch {
	case i%7 == 1:
		p.faults.Add(1)
		http.Error(w, "upstream exploded", http.StatusInternalServerError)
	case i%7 == 3:
		p.faults.Add(1)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	case i%11 == 5:
		p.faults.Add(1)
		rec := httptest.NewRecorder()
		p.next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body[:len(body)/2])
	case i%13 == 7:
		p.faults.Add(1)
		if hj, ok := w.(http.Hijacker); ok {
			conn, _, err := hj.Hijack()
			if err == nil {
				_ = conn.Close()
				return
			}
		}
		http.Error(w, "reset", http.StatusBadGateway)
	case i%17 == 9:
		p.faults.Add(1)
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	default:
		p.next.ServeHTTP(w, r)
	}
}

func TestIndexThroughFaultyRPC(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	rec, err := replaynode.Load(filepath.Join("..", "testdata", "localnet", "osmosis"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := &faultProxy{next: replaynode.New(rec, replaynode.Options{}).Handler()}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	ln := localnets[0]
	cfg := chainConfig(ln, srv.URL)
	client, _ := cometbft.New(cfg.RPC, cometbft.Retry{Attempts: 8, Base: 5 * time.Millisecond, Max: 50 * time.Millisecond, AttemptTimeout: time.Second}, nil)
	m, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := x.Run(ctx, ln.blocks); err != nil {
		t.Fatal(err)
	}
	if got := count(t, db, "SELECT count(*) FROM blocks"); got != ln.blocks {
		t.Fatalf("blocks %d, want %d", got, ln.blocks)
	}
	if got := count(t, db, "SELECT count(*) FROM txs"); got != ln.txs {
		t.Fatalf("txs %d, want %d", got, ln.txs)
	}
	if proxy.faults.Load() < 100 {
		t.Fatalf("only %d faults injected", proxy.faults.Load())
	}
	t.Logf("%d requests, %d faults injected", proxy.n.Load(), proxy.faults.Load())
}

// prunedProxy makes the node look pruned below height 10.
type prunedProxy struct{ next http.Handler }

func (p prunedProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params map[string]string `json:"params"`
	}
	_ = json.Unmarshal(body, &req)
	if h, err := strconv.Atoi(req.Params["height"]); err == nil && h < 10 && (req.Method == "block" || req.Method == "block_results") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32603,"message":"Internal error","data":"height ` + strconv.Itoa(h) + ` is not available, lowest height is 10"}}`))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	p.next.ServeHTTP(rec, r)
	out := rec.Body.String()
	if req.Method == "status" {
		out = strings.Replace(out, `"earliest_block_height":"1"`, `"earliest_block_height":"10"`, 1)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(out))
}

func TestPrunedStart(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	rec, err := replaynode.Load(filepath.Join("..", "testdata", "localnet", "osmosis"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(prunedProxy{next: replaynode.New(rec, replaynode.Options{}).Handler()})
	defer srv.Close()
	ln := localnets[0]
	cfg := chainConfig(ln, srv.URL)
	cfg.StartHeight = 1
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = newIndexer(t, db, cfg).Run(ctx, 50)
	if err == nil || !strings.Contains(err.Error(), "height 1 is pruned on the node (earliest available: 10)") {
		t.Fatalf("err = %v", err)
	}
	cfg.AllowPrunedStart = true
	if err := newIndexer(t, db, cfg).Run(ctx, 50); err != nil {
		t.Fatal(err)
	}
	if lo, n := count(t, db, "SELECT min(height) FROM blocks"), count(t, db, "SELECT count(*) FROM blocks"); lo != 10 || n != 41 {
		t.Fatalf("indexed from %d, %d heights; want from 10, 41 heights", lo, n)
	}
}

// TestPrunedResumeIsRefused indexes a few heights from a full node, then
// resumes from a node pruned above the checkpoint: allow_pruned_start must
// not skip the missing heights (a silent gap); the indexer stops instead.
func TestPrunedResumeIsRefused(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ln := localnets[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := newIndexer(t, db, chainConfig(ln, replayServer(t, ln.dir).URL)).Run(ctx, 5); err != nil {
		t.Fatal(err)
	}
	rec, err := replaynode.Load(filepath.Join("..", "testdata", "localnet", "osmosis"))
	if err != nil {
		t.Fatal(err)
	}
	pruned := httptest.NewServer(prunedProxy{next: replaynode.New(rec, replaynode.Options{}).Handler()})
	defer pruned.Close()
	cfg := chainConfig(ln, pruned.URL)
	cfg.AllowPrunedStart = true
	err = newIndexer(t, db, cfg).Run(ctx, 50)
	if err == nil || !strings.Contains(err.Error(), "height 6, the next to index, is pruned on the node (earliest available: 10)") {
		t.Fatalf("err = %v", err)
	}
	if n, hi := count(t, db, "SELECT count(*) FROM blocks"), count(t, db, "SELECT next_height FROM sync_state"); n != 5 || hi != 6 {
		t.Fatalf("%d blocks, next height %d; want 5 and 6", n, hi)
	}
}

// TestHeightRefusalsFailOver indexes through several endpoints, the first
// of which refuses some heights: a pruned node (below 10), or a node
// behind the others (tip 100). The heights it refuses are read from the
// next endpoint, and the chain's status is that of all of them (earliest
// 1, tip 299): nothing is skipped and no height becomes a dead letter.
func TestHeightRefusalsFailOver(t *testing.T) {
	t.Parallel()
	rec, err := replaynode.Load(filepath.Join("..", "testdata", "localnet", "osmosis"))
	if err != nil {
		t.Fatal(err)
	}
	serve := func(h http.Handler) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	full := serve(replaynode.New(rec, replaynode.Options{}).Handler())
	pruned := serve(prunedProxy{next: replaynode.New(rec, replaynode.Options{}).Handler()})
	behind := serve(replaynode.New(rec, replaynode.Options{BlockTime: time.Hour, StartHeight: 100}).Handler())
	ln := localnets[0]
	for _, c := range []struct {
		name string
		rpc  []string
	}{
		{"pruned first", []string{pruned, full}},
		{"behind first", []string{behind, full}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, _ := testdb.New(t)
			cfg := chainConfig(ln, "")
			cfg.RPC, cfg.StartHeight = c.rpc, 1
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := newIndexer(t, db, cfg).Run(ctx, ln.blocks); err != nil {
				t.Fatal(err)
			}
			for _, q := range []struct {
				query string
				want  int64
			}{
				{"SELECT count(*) FROM blocks", ln.blocks},
				{"SELECT min(height) FROM blocks", 1},
				{"SELECT count(*) FROM txs", ln.txs},
				{"SELECT count(*) FROM dead_letters", 0},
			} {
				if got := count(t, db, q.query); got != q.want {
					t.Errorf("%s = %d, want %d", q.query, got, q.want)
				}
			}
		})
	}
}

// TestNodesThatCannotServeFail: endpoints of two different chains stop the
// indexer at once (a configuration error, not an outage), and with
// GiveUpAfter a node that stays behind the indexed height fails the run
// instead of being waited for ever.
func TestNodesThatCannotServeFail(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ln := localnets[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := chainConfig(ln, "")
	cfg.RPC = []string{replayServer(t, ln.dir).URL, replayServer(t, "neutron").URL}
	err := newIndexer(t, db, cfg).Run(ctx, 50)
	if !errors.Is(err, cometbft.ErrMixedChains) {
		t.Fatalf("run with endpoints of two chains: %v", err)
	}

	if err := newIndexer(t, db, chainConfig(ln, replayServer(t, ln.dir).URL)).Run(ctx, 50); err != nil {
		t.Fatal(err)
	}
	rec, err := replaynode.Load(filepath.Join("..", "testdata", "localnet", "osmosis"))
	if err != nil {
		t.Fatal(err)
	}
	behind := httptest.NewServer(replaynode.New(rec, replaynode.Options{BlockTime: time.Hour, StartHeight: 20}).Handler())
	defer behind.Close()
	x := newIndexer(t, db, chainConfig(ln, behind.URL))
	x.GiveUpAfter = 300 * time.Millisecond
	if err := x.Run(ctx, 60); err == nil || !strings.Contains(err.Error(), "the node stayed behind the indexed height 50 for 300ms (its tip: 20)") {
		t.Fatalf("run against a node behind: %v", err)
	}
}
