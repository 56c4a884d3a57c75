package golden_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/testcluster"
	"github.com/chainlens/chainlens/store/reads"
)

// countingReads counts the servers answers are read from.
type countingReads struct {
	*reads.Pool
	mu     sync.Mutex
	served map[string]int
}

func (c *countingReads) Begin(ctx context.Context) (*reads.Snapshot, error) {
	s, err := c.Pool.Begin(ctx)
	if err == nil {
		c.mu.Lock()
		c.served[s.Server]++
		c.mu.Unlock()
	}
	return s, err
}

func (c *countingReads) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.served {
		out[k] = v
	}
	return out
}

// TestAnswersFromAReplica indexes every recording into the primary of a
// real replicated cluster and serves the API from its streaming replica:
// every answer of every group equals the pinned one (which the primary
// gives), freshness headers included. Then, under load, the replica is
// stopped: the answers go on from the primary, each with its pinned status
// (no 5xx but the pinned not-configured 503s).
func TestAnswersFromAReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes every recording")
	}
	ctx := context.Background()
	c := testcluster.Start(t, 1, true)
	primary := c.Open(t, c.Primary)
	cfg := localConfig(t)
	indexInto(t, primary, cfg)
	c.WaitReplayed(t)
	now := clockAfter(t, primary)

	pool := reads.New(primary, []reads.Replica{{Name: "read_urls[0]", DB: c.Open(t, c.Reads[0])}}, time.Minute, slog.New(slog.DiscardHandler), nil)
	pool.Probe(ctx)
	src := &countingReads{Pool: pool, served: map[string]int{}}
	srv := apitest.ServeWith(t, primary, cfg, now, func(o *api.Options) { o.Reads = src })

	got := answers(t, srv, cfg)
	compare(t, srv, readLines(t, answersFile), got)
	if n := src.counts(); n["primary"] != 0 || n["read_urls[0]"] < len(got)/2 {
		t.Fatalf("answers read from %v; want the replica only", n)
	}

	// The replica stops under load: every answer keeps its pinned status
	// (no 5xx but the pinned not-configured 503s).
	pinned := map[string]string{}
	var all []string
	for _, l := range got {
		f := strings.Fields(l)
		pinned[f[len(f)-1]] = f[0]
		all = append(all, f[len(f)-1])
	}
	// A key that the load cannot exhaust (the shared one allows 1,000/s).
	loadKey, _, err := apikey.Create(ctx, primary, apikey.Spec{Name: "load", Kind: apikey.Secret, Scopes: []string{"all"},
		QuotaCredits: 1 << 40, QuotaPeriod: 24 * time.Hour, RatePerSec: 1 << 20, RateBurst: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	load := apitest.Server{URL: srv.URL, Key: loadKey}
	var (
		wg     sync.WaitGroup
		stop   atomic.Bool
		failed atomic.Int64
		asked  atomic.Int64
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; !stop.Load(); i += 4 {
				u := all[i%len(all)]
				resp, body := get(t, load, u)
				asked.Add(1)
				if strconv.Itoa(resp.StatusCode) != pinned[u] {
					failed.Add(1)
					t.Errorf("%s while the replica stopped: %d %s (pinned %s)", u, resp.StatusCode, body, pinned[u])
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	c.StopServer(t, 1)
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	n := src.counts()
	t.Logf("%d answers under load, %d failed; read from %v", asked.Load(), failed.Load(), n)
	if n["primary"] == 0 {
		t.Fatal("no answer was read from the primary after the replica stopped")
	}
	if st := pool.Status(); st[0].Usable {
		t.Fatalf("the stopped replica is still usable: %+v", st)
	}
}
