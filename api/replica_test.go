package api_test

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testcluster"
	"github.com/chainlens/chainlens/store"
	"github.com/chainlens/chainlens/store/reads"
)

// TestResponseCacheOnReplicas: answers read on a streaming replica carry
// the replica's data; a change announced on the primary is recomputed
// from the replica, and an answer computed before the replica replayed
// the announcing commit is not kept as current: every request recomputes
// it until the replica has replayed, then it is kept again.
func TestResponseCacheOnReplicas(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testcluster.Start(t, 1, true)
	primary, replica := c.Open(t, c.Primary), c.Open(t, c.Reads[0])
	if err := store.EnsurePartitions(ctx, primary, "a", []string{"blocks"}, 1, 10); err != nil {
		t.Fatal(err)
	}
	c.WaitReplayed(t)
	log := slog.New(slog.DiscardHandler)
	pool := reads.New(primary, []reads.Replica{{Name: "read_urls[0]", DB: replica}}, time.Minute, log, nil)
	pool.Probe(ctx)
	changes := store.NewChanges()
	changes.TrackReplay()
	go func() { _ = changes.Run(ctx, primary, log) }()

	var calls atomic.Int64
	e := newEnvWith(t, func(o *api.Options, _ *bun.DB) {
		o.Config.CacheTTL = config.Duration(time.Minute)
		o.Config.CacheStale = 0
		o.Changes = changes
		o.DB, o.Reads = primary, pool
		o.Handlers.JSON[route.DexLensActiveWhales] = func(ctx context.Context, req *api.Request) (*api.Response, error) {
			calls.Add(1)
			var row struct {
				N    int64 `bun:"n"`
				Port int   `bun:"port"`
			}
			if err := api.Reader(ctx, nil).NewRaw("SELECT count(*) AS n, inet_server_port() AS port FROM blocks WHERE chain_id = 'a'").Scan(ctx, &row); err != nil {
				return nil, err
			}
			return &api.Response{Body: map[string]any{"blocks": row.N, "port": row.Port},
				Freshness: api.Freshness{Chains: []api.ChainHeight{{ChainID: "a", Height: row.N, Time: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)}}}}, nil
		}
	})
	for deadline := time.Now().Add(10 * time.Second); !changes.Listening(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not listening")
		}
	}
	c.WaitReplayed(t) // what the listener's start marked
	replicaPort := c.Reads[0][len("postgres://postgres@127.0.0.1:"):]
	replicaPort = replicaPort[:len("12345")]
	get := func() (body string, height string) {
		t.Helper()
		resp, b := e.do(t, "GET", "/activity/active_whales", e.key, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		return string(b), resp.Header.Get("X-Data-Height")
	}
	commit := func(height int) {
		t.Helper()
		before := changes.Seq()
		if _, err := primary.ExecContext(ctx, "INSERT INTO blocks VALUES ('a', ?, 'h', now(), 'p', 'x', 0)", height); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); !changes.ChangedSince(before, []string{"a"}); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the commit was never announced")
			}
		}
	}
	want := func(blocks int) string {
		return `{"blocks":` + strconv.Itoa(blocks) + `,"port":` + replicaPort + "}\n"
	}
	steps := []struct {
		name         string
		before       func()
		blocks       int
		recalculated bool
	}{
		{"first request, on the replica", func() {}, 0, true},
		{"nothing changed: kept", func() {}, 0, false},
		{"a commit announced, the replica paused before it", func() {
			if _, err := replica.ExecContext(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
				t.Fatal(err)
			}
			commit(1)
		}, 0, true},
		{"the replica still behind: recomputed, not kept as current", func() {}, 0, true},
		{"the replica replayed the commit", func() {
			if _, err := replica.ExecContext(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
				t.Fatal(err)
			}
			c.WaitReplayed(t)
		}, 1, true},
		{"nothing changed since: kept", func() {}, 1, false},
	}
	for _, s := range steps {
		s.before()
		before := calls.Load()
		body, height := get()
		if body != want(s.blocks) || height != strconv.Itoa(s.blocks) {
			t.Fatalf("%s: %s (X-Data-Height %s), want %s", s.name, body, height, want(s.blocks))
		}
		if got := calls.Load() > before; got != s.recalculated {
			t.Fatalf("%s: computed %v, want %v", s.name, got, s.recalculated)
		}
	}
}
