package indexer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestDatabaseOutageIsSurvived: while a run indexes a recorded localnet,
// every connection it holds is cut from the server's side again and again
// (pg_terminate_backend: what a Postgres restart or failover does to a
// client). The run reconnects, takes its lock again and resumes from the
// checkpoint, and ends with the recording indexed exactly; before, the
// first cut ended it.
func TestDatabaseOutageIsSurvived(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("indexes a recorded chain")
	}
	db, _ := testdb.New(t)
	ln := localnets[0] // osmosis
	srv := replayServer(t, ln.dir)
	cfg := chainConfig(ln, srv.URL)
	cfg.BatchSize = 5
	x := newIndexer(t, db, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	done := make(chan error, 1)
	go func() { done <- x.Run(ctx, ln.blocks) }()
	var cuts atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for cuts.Load() < 5 {
			select {
			case <-stop:
				return
			case <-time.After(40 * time.Millisecond):
			}
			var n int
			if err := db.NewRaw(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(context.Background(), &n); err != nil {
				continue // this connection was cut by an earlier round
			}
			if n > 0 {
				cuts.Add(1)
			}
		}
	}()
	err := <-done
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("the run ended with %v", err)
	}
	if cuts.Load() == 0 {
		t.Fatal("no connection was cut while the run indexed")
	}
	t.Logf("%d cuts", cuts.Load())
	for _, c := range []struct {
		query string
		want  int64
	}{
		{"SELECT count(*) FROM blocks WHERE chain_id = ?", ln.blocks},
		{"SELECT count(DISTINCT height) FROM blocks WHERE chain_id = ?", ln.blocks},
		{"SELECT count(*) FROM txs WHERE chain_id = ?", ln.txs},
		{"SELECT count(*) FROM dead_letters WHERE chain_id = ?", 0},
		{"SELECT next_height FROM sync_state WHERE chain_id = ?", ln.blocks + 1},
	} {
		if got := count(t, db, c.query, ln.chainID); got != c.want {
			t.Errorf("%s = %d, want %d", c.query, got, c.want)
		}
	}
}

// TestNodeGoneMidRunGivesUp: a run to a target height whose node goes away
// for good mid-run (every connection dropped from some height on) ends
// with an error soon after GiveUpAfter, with every height below the first
// unreachable one committed and nothing at or past it: no dead letters
// for an outage. Before, each height burned its retries and became a dead
// letter, and the run went on for minutes.
func TestNodeGoneMidRunGivesUp(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ln := localnets[0] // osmosis
	rec, err := replaynode.Load(filepath.Join("..", "testdata", "localnet", ln.dir))
	if err != nil {
		t.Fatal(err)
	}
	node := replaynode.New(rec, replaynode.Options{}).Handler()
	var gone atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var call struct {
			Params struct {
				Height json.RawMessage `json:"height"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &call) == nil {
			if h, err := strconv.ParseInt(strings.Trim(string(call.Params.Height), `"`), 10, 64); err == nil && h >= 60 {
				gone.Store(true)
			}
		}
		if gone.Load() {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close() // no answer at all
			}
			return
		}
		node.ServeHTTP(w, r)
	}))
	defer srv.Close()
	x := newIndexer(t, db, chainConfig(ln, srv.URL))
	x.GiveUpAfter = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	err = x.Run(ctx, ln.blocks)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "for 500ms") {
		t.Fatalf("err = %v, want the run to give up after 500ms", err)
	}
	if took > 20*time.Second {
		t.Errorf("gave up after %s", took)
	}
	next := count(t, db, "SELECT next_height FROM sync_state WHERE chain_id = ?", ln.chainID)
	if next > 60 || next < 2 {
		t.Errorf("checkpoint at %d, want past the heights served and not past 60", next)
	}
	for _, c := range []struct {
		query string
		want  int64
	}{
		{"SELECT count(*) FROM blocks WHERE chain_id = ?", next - 1},
		{"SELECT count(*) FROM dead_letters WHERE chain_id = ?", 0},
	} {
		if got := count(t, db, c.query, ln.chainID); got != c.want {
			t.Errorf("%s = %d, want %d", c.query, got, c.want)
		}
	}
}
