package indexer

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/kinds"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/internal/testdb"
)

// syncBuffer is a log sink for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStreamedHeightsIndexExactly indexes a synthetic chain whose height 7
// has a ~12 MB /block_results (sent with a Content-Length; its first two
// answers break after 5 MB) and height 10 a ~6 MB one (sent without
// Content-Length), among small heights, through a real HTTP server and
// client: once with every height read into memory, once with a 4 MB
// in-memory limit, so that 7 and 10 go through the stream lane (streaming
// decode, spill files, a commit of their own). Both runs must end at the
// same checkpoint with the same rows, table by table, exactly.
func TestStreamedHeightsIndexExactly(t *testing.T) {
	// Not parallel: it counts the spill files the whole process holds open.
	if testing.Short() {
		t.Skip("generates and indexes 18 MB of block_results twice")
	}
	db, _ := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const last = 12
	mem := newSynthChain(t, t.TempDir(), "synth-memory", last, map[int64]int{7: 12 << 20, 10: 6 << 20})
	str := mem.as("synth-stream")
	str.chunked[10] = true
	str.breaks[7] = &breakPlan{after: 5 << 20}
	str.breaks[7].n.Store(2) // two reads break, the third of streamAttempts succeeds

	run := func(chain *synthChain, streamAbove int64) string {
		srv := httptest.NewServer(chain)
		defer srv.Close()
		client, err := cometbft.New([]string{srv.URL}, cometbft.Retry{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := NewMetrics(nil)
		logs := &syncBuffer{}
		cfg := config.Chain{ID: chain.chainID, Kind: "osmosis", RPC: []string{srv.URL}, BatchSize: 5, Concurrency: 3,
			PollInterval: config.Duration(10 * time.Millisecond), Bech32Prefix: "osmo"}
		x := NewCosmos(cfg, db, NewClientSource(client), cosmos.NewAdapter("osmosis", "osmo"), slog.New(slog.NewTextHandler(logs, nil)), m)
		x.StreamAbove = streamAbove
		if err := x.Run(ctx, last); err != nil {
			t.Fatalf("%s: %v\n%s", chain.chainID, err, logs)
		}
		return logs.String()
	}
	if logs := run(mem, cometbft.MaxResponseBytes); strings.Contains(logs, "read as a stream") {
		t.Fatalf("the in-memory run streamed a height:\n%s", logs)
	}
	logs := run(str, 4<<20)
	if n := strings.Count(logs, "height read as a stream"); n != 2 {
		t.Fatalf("%d heights read as a stream, want 2:\n%s", n, logs)
	}
	if !strings.Contains(logs, "block_results stream broke; reading the height again") || str.calls(7) < 3 {
		t.Fatalf("the broken stream of height 7 was not read again (%d calls):\n%s", str.calls(7), logs)
	}

	if n := openSpillFiles(); n != 0 {
		t.Errorf("%d spill files still open after the runs", n)
	}

	// Expected counts, from the generator: every tenth tx is undecodable,
	// every fiftieth failed.
	var txs, msgs, failed int64
	for h := int64(1); h <= last; h++ {
		for i := range mem.txs[h] {
			txs++
			if i%10 != 9 {
				msgs++
			}
			if i%50 == 49 {
				failed++
			}
		}
	}
	for _, id := range []string{mem.chainID, str.chainID} {
		for q, want := range map[string]int64{
			"SELECT next_height FROM sync_state WHERE chain_id = ?":                last + 1,
			"SELECT count(*) FROM blocks WHERE chain_id = ?":                       last,
			"SELECT count(*) FROM dead_letters WHERE chain_id = ?":                 0,
			"SELECT count(*) FROM mint_events WHERE chain_id = ?":                  last,
			"SELECT count(DISTINCT height) FROM block_rewards WHERE chain_id = ?":  last,
			"SELECT count(*) FROM block_rewards WHERE chain_id = ? AND height = 7": 3, // commission uosmo, rewards uosmo and ibc
			"SELECT count(*) FROM txs WHERE chain_id = ?":                          txs,
			"SELECT count(*) FROM messages WHERE chain_id = ?":                     msgs,
			"SELECT count(*) FROM txs WHERE chain_id = ? AND code <> 0":            failed,
			"SELECT count(*) FROM blocks WHERE chain_id = ? AND num_txs = (SELECT count(*) FROM txs t WHERE t.chain_id = blocks.chain_id AND t.height = blocks.height)": last,
		} {
			var got int64
			if err := db.NewRaw(q, id).Scan(ctx, &got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s: %s = %d, want %d", id, q, got, want)
			}
		}
	}
	w := newWriter(db, "", "", cosmos.NewAdapter("osmosis", "osmo").Tables())
	for _, tb := range w.tables {
		var nMem, nStr, diff int64
		q := "SELECT count(*) FROM " + tb.Name + " WHERE chain_id = ?"
		if err := db.NewRaw(q, mem.chainID).Scan(ctx, &nMem); err != nil {
			t.Fatal(err)
		}
		if err := db.NewRaw(q, str.chainID).Scan(ctx, &nStr); err != nil {
			t.Fatal(err)
		}
		rows := func(id string) string {
			return "(SELECT to_jsonb(t) - 'chain_id' - 'id' FROM " + tb.Name + " t WHERE chain_id = '" + id + "')"
		}
		if err := db.NewRaw("SELECT count(*) FROM ("+rows(mem.chainID)+" EXCEPT ALL "+rows(str.chainID)+") a", nil...).Scan(ctx, &diff); err != nil {
			t.Fatal(err)
		}
		if nMem != nStr || diff != 0 {
			t.Errorf("%s: %d rows in memory, %d streamed, %d differ", tb.Name, nMem, nStr, diff)
		}
		t.Logf("%s: %d rows, identical", tb.Name, nStr)
	}
}

// openSpillFiles counts the process's open spill files (0 where /proc is
// missing).
func openSpillFiles() int {
	fds, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.Contains(target, "chainlens-spill-") {
			n++
		}
	}
	return n
}

// textLines splits a height's COPY text into the sorted lines of each table.
func textLines(tables []chains.Table, text *copyText) map[string][]string {
	out := map[string][]string{}
	for i, tb := range tables {
		for _, line := range strings.SplitAfter(string(text.tables[i]), "\n") {
			if line != "" {
				out[tb.Name] = append(out[tb.Name], line)
			}
		}
		sort.Strings(out[tb.Name])
	}
	return out
}

// spillLines reads a spill back as the sorted COPY text lines of each table.
func spillLines(t *testing.T, sp *spill) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for name, sf := range sp.files {
		if _, err := sf.f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(sf.f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if int64(len(lines)) != sf.rows {
			t.Fatalf("%s: %d lines for %d rows", name, len(lines), sf.rows)
		}
		sort.Strings(lines)
		out[name] = lines
	}
	return out
}

// TestStreamLaneRowsMatchLocalnets builds the rows of every recorded
// localnet height, with the chain kind's adapter, both ways, read whole (decodeWhole: raw and domain rows
// in memory) and as a stream (streamHeight: parts spilled as COPY text),
// and compares the COPY text of every table exactly.
func TestStreamLaneRowsMatchLocalnets(t *testing.T) {
	// Not parallel: it counts the spill files the whole process holds open.
	for _, ln := range []struct{ dir, chainID, kind, prefix string }{
		{"osmosis", "localosmosis", "osmosis", "osmo"},
		{"dydx", "localdydxprotocol", "dydx", "dydx"},
		{"neutron", "localneutron", "neutron", "neutron"},
		{"xion", "localxion", "xion", "xion"},
		{"cosmoshub", "localcosmos", "cosmoshub", "cosmos"},
	} {
		t.Run(ln.dir, func(t *testing.T) {
			m, _ := NewMetrics(nil)
			cfg := config.Chain{ID: ln.chainID, Kind: ln.kind, Bech32Prefix: ln.prefix}
			adapter, err := kinds.Adapter(cfg) // the kind's own adapter (Osmosis adds its dex rows)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := adapter.(chains.StreamAdapter); !ok {
				t.Fatalf("the %s adapter cannot stream", ln.kind)
			}
			x := NewCosmos(cfg, nil, nil, adapter, slog.New(slog.DiscardHandler), m)
			lines := 0
			for _, raw := range loadRaw(t, ln.dir, ln.chainID) {
				whole := x.decodeWhole(raw.Height, chains.AttrAuto, raw.Block, raw.Results, nil)
				if whole.err != nil {
					t.Fatal(whole.err)
				}
				f, err := x.streamHeight(context.Background(), raw.Height, chains.AttrAuto, raw.Block, bytes.NewReader(raw.Results), nil)
				if err != nil {
					t.Fatalf("height %d: %v", raw.Height, err)
				}
				want, got := textLines(x.w.tables, whole.text), spillLines(t, f.spill)
				for _, tb := range x.w.tables {
					if !slices.Equal(got[tb.Name], want[tb.Name]) {
						t.Fatalf("height %d: %s rows differ\n got %q\nwant %q", raw.Height, tb.Name, got[tb.Name], want[tb.Name])
					}
					lines += len(want[tb.Name])
				}
				if f.events != whole.events || !reflect.DeepEqual(f.block.Stats, whole.block.Stats) || f.block.Time != whole.block.Time {
					t.Fatalf("height %d: events %d stats %+v, want %d %+v", raw.Height, f.events, f.block.Stats, whole.events, whole.block.Stats)
				}
				if openSpillFiles() == 0 {
					t.Fatalf("height %d: no spill file open before release", raw.Height)
				}
				f.release()
				if n := openSpillFiles(); n != 0 {
					t.Fatalf("height %d: %d spill files open after release", raw.Height, n)
				}
			}
			t.Logf("%d rows identical (%d tables)", lines, len(x.w.tables))
		})
	}
}

// TestEveryHeightStreamed indexes a chain whose heights are all read as a
// stream, some without Content-Length: the lane admits them one at a time
// with at most one waiting for its commit, and the catch-up neither stalls
// nor loses a row.
func TestEveryHeightStreamed(t *testing.T) {
	// Not parallel: it counts the spill files the whole process holds open.
	db, _ := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const last = 24
	sizes := map[int64]int{}
	for h := int64(1); h <= last; h++ {
		sizes[h] = 100<<10 + int(h)*7<<10
	}
	chain := newSynthChain(t, t.TempDir(), "synth-all", last, sizes)
	for h := int64(1); h <= last; h += 3 {
		chain.chunked[h] = true
	}
	srv := httptest.NewServer(chain)
	defer srv.Close()
	client, err := cometbft.New([]string{srv.URL}, cometbft.Retry{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := NewMetrics(nil)
	logs := &syncBuffer{}
	cfg := config.Chain{ID: chain.chainID, Kind: "osmosis", RPC: []string{srv.URL}, BatchSize: 4, Concurrency: 4,
		PollInterval: config.Duration(10 * time.Millisecond), Bech32Prefix: "osmo"}
	x := NewCosmos(cfg, db, NewClientSource(client), cosmos.NewAdapter("osmosis", "osmo"), slog.New(slog.NewTextHandler(logs, nil)), m)
	x.StreamAbove = 64 << 10
	if err := x.Run(ctx, last); err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	if n := strings.Count(logs.String(), "height read as a stream"); n != last {
		t.Fatalf("%d heights read as a stream, want %d", n, last)
	}
	var txs int64
	for h := int64(1); h <= last; h++ {
		txs += int64(chain.txs[h])
	}
	for q, want := range map[string]int64{
		"SELECT next_height FROM sync_state WHERE chain_id = ?": last + 1,
		"SELECT count(*) FROM blocks WHERE chain_id = ?":        last,
		"SELECT count(*) FROM txs WHERE chain_id = ?":           txs,
		"SELECT count(*) FROM dead_letters WHERE chain_id = ?":  0,
		"SELECT count(*) FROM mint_events WHERE chain_id = ?":   last,
	} {
		var got int64
		if err := db.NewRaw(q, chain.chainID).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	if n := openSpillFiles(); n != 0 {
		t.Errorf("%d spill files still open", n)
	}
}
