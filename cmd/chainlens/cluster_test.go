package main_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/testcluster"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestFailoverLosesNothing runs chainlens as separate processes on a real
// replicated cluster — an indexer following a chain, an aggregator, and an
// API server reading from a replica while /track events pour in — and
// fails the primary over mid-flight, as a crash (pg_ctl stop -m immediate)
// followed by the promotion of the synchronous replica. Every process
// carries on by itself: the indexer resumes from its checkpoint and every
// height is stored exactly once, the aggregator's jobs run on the new
// primary, every acknowledged /track event is stored exactly once, and
// the API answers from its replica, which now follows the new primary.
func TestFailoverLosesNothing(t *testing.T) {
	c := testcluster.Start(t, 2, false)
	apiAddr := freeAddr(t)
	// The chain is revealed one height per 40 ms from 150 on: the indexer
	// is still following it when the primary fails.
	// The API reads replica 2, the one that must follow the promoted
	// replica 1 (c.Reads lists the replicas of the moment).
	replica := c.Reads[1]
	nodeAddr := freeAddr(t)
	node := exec.Command(devBin, "replay-node", "--data", "../../testdata/localnet/osmosis", "--listen", nodeAddr,
		"--block-time", "40ms", "--start-height", "150")
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Process.Kill(); _ = node.Wait() })
	waitHTTP(t, "http://"+nodeAddr+"/health")
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf(`database: {url: %q, read_urls: [%q], max_replica_lag: 5s}
api: {listen: %s, rate_limit: {per_second: 1000000, burst: 1000000}, quota: {credits: 1000000000000}}
aggregator: {schedule: "@every 1s"}
log: {level: warn}
chains:
  - {id: localosmosis, kind: osmosis, rpc: [http://%s], poll_interval: 20ms}
`, c.Failover, replica, apiAddr, nodeAddr)), 0o644)
	if _, stderr, code := run(t, "migrate", "up", "--config", cfg); code != 0 {
		t.Fatalf("migrate: %s", stderr)
	}
	key, stderr, code := run(t, "keys", "create", "--config", cfg, "--name", "site", "--scopes", "all")
	if code != 0 {
		t.Fatalf("keys create: %s", stderr)
	}
	key = strings.TrimSpace(key)

	logs := map[string]*strings.Builder{}
	var logMu sync.Mutex
	start := func(name string, args ...string) {
		cmd := exec.Command(bin, append(args, "--config", cfg)...)
		pipe, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		b := &strings.Builder{}
		logMu.Lock()
		logs[name] = b
		logMu.Unlock()
		go func() {
			s := bufio.NewScanner(pipe)
			for s.Scan() {
				logMu.Lock()
				b.WriteString(s.Text() + "\n")
				logMu.Unlock()
			}
		}()
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	defer func() {
		if t.Failed() {
			logMu.Lock()
			defer logMu.Unlock()
			for name, b := range logs {
				t.Logf("%s stderr:\n%s", name, b.String())
			}
		}
	}()
	start("index", "index")
	start("aggregate", "aggregate")
	start("serve", "serve")
	waitHTTP(t, "http://"+apiAddr+"/healthz")

	// /track load from 8 connections for the whole test.
	ctx, stop := context.WithCancel(context.Background())
	var (
		mu    sync.Mutex
		acked = map[string]bool{}
		seq   atomic.Int64
		wg    sync.WaitGroup
	)
	client := &http.Client{Timeout: 10 * time.Second}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := seq.Add(1)
				body := fmt.Sprintf(`{"name":"trade_made","identity":{"type":"address","id":"osmo1w%d"},"timestamp":%d}`, i, time.Now().UnixMilli())
				status, id, _, err := postTrack(client, apiAddr, key, body)
				if err != nil || status != 200 {
					time.Sleep(10 * time.Millisecond) // 503 while the database is away: not acknowledged
					continue
				}
				mu.Lock()
				acked[id] = true
				mu.Unlock()
			}
		}()
	}
	// An analytics answer asked every 20 ms throughout: once it has data,
	// always answered, with its data height.
	var (
		asked, bad atomic.Int64
		badMu      sync.Mutex
		badAnswers []string
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			req, _ := http.NewRequest("GET", "http://"+apiAddr+"/trading/volume/top_assets_date_range?start_date=2026-11-21&end_date=2026-11-22", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := client.Do(req)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			h := resp.Header.Get("X-Data-Height")
			good := resp.StatusCode == 200 && h != "" && h != "0"
			if asked.Load() == 0 && !good {
				time.Sleep(20 * time.Millisecond)
				continue // not aggregated yet
			}
			asked.Add(1)
			if !good {
				bad.Add(1)
				badMu.Lock()
				badAnswers = append(badAnswers, fmt.Sprintf("%d (height %q) %.200s", resp.StatusCode, h, b))
				badMu.Unlock()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	ackedNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}

	primary := c.Open(t, c.Primary)
	indexed := func() int64 {
		var h int64
		_ = primary.NewRaw("SELECT coalesce(max(next_height) - 1, 0) FROM sync_state WHERE chain_id = 'localosmosis'").Scan(context.Background(), &h)
		return h
	}
	for deadline := time.Now().Add(60 * time.Second); indexed() < 60 || ackedNow() < 200; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("before the failover: indexed %d, %d events acknowledged", indexed(), ackedNow())
		}
	}
	before, at := ackedNow(), indexed()
	t.Setenv("CHAINLENS_CLUSTER_CRASH", "1")
	c.Promote(t)
	failedOver := time.Now()
	t.Logf("failed over at height %d with %d events acknowledged", at, before)

	// Everything resumes on the new primary by itself.
	newPrimary := c.Open(t, c.Primary)
	var h, promotedAt int64
	// The indexer can finish the recording's last heights while the primary
	// is being stopped: then it has nothing left to resume.
	_ = newPrimary.NewRaw("SELECT coalesce(max(next_height) - 1, 0) FROM sync_state WHERE chain_id = 'localosmosis'").Scan(context.Background(), &promotedAt)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_ = newPrimary.NewRaw("SELECT coalesce(max(next_height) - 1, 0) FROM sync_state WHERE chain_id = 'localosmosis'").Scan(context.Background(), &h)
		if h == 299 && ackedNow() > before+200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the failover: indexed %d, %d events acknowledged (%d before)", h, ackedNow(), before)
		}
	}
	stop()
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d of %d analytics answers during the failover were not answered with a data height: %q", bad.Load(), asked.Load(), badAnswers[:min(5, len(badAnswers))])
	}

	// Every height once, no gap.
	var blocks, distinct, lowest, highest int64
	if err := newPrimary.NewRaw("SELECT count(*), count(DISTINCT height), min(height), max(height) FROM blocks WHERE chain_id = 'localosmosis'").
		Scan(context.Background(), &blocks, &distinct, &lowest, &highest); err != nil {
		t.Fatal(err)
	}
	if blocks != 299 || distinct != 299 || lowest != 1 || highest != 299 {
		t.Errorf("blocks: %d rows, %d heights, %d..%d; want 299 heights 1..299 once each", blocks, distinct, lowest, highest)
	}
	// Every acknowledged event once.
	var ids []string
	if err := newPrimary.NewRaw("SELECT id FROM tracked_events").Scan(context.Background(), &ids); err != nil {
		t.Fatal(err)
	}
	stored := map[string]int{}
	for _, id := range ids {
		stored[id]++
	}
	missing := 0
	mu.Lock()
	for id := range acked {
		if stored[id] != 1 {
			missing++
		}
	}
	total := len(acked)
	mu.Unlock()
	if missing > 0 {
		t.Errorf("%d of %d acknowledged events not stored exactly once", missing, total)
	}
	// The aggregator runs on the new primary (its jobs retry every second;
	// on a loaded machine the first success can come a few seconds after
	// the promotion).
	var ranAfter int
	for deadline := time.Now().Add(30 * time.Second); ranAfter == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err := newPrimary.NewRaw("SELECT count(*) FROM aggregator_jobs WHERE last_run_at > ? AND last_error IS NULL", failedOver).Scan(context.Background(), &ranAfter); err != nil {
			t.Fatal(err)
		}
	}
	if ranAfter == 0 {
		t.Error("no aggregator job ran within 30 s after the failover")
	}
	// The API answers from its replica, which follows the new primary, up
	// to the last height.
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest("GET", "http://"+apiAddr+"/trading/volume/top_assets_date_range?start_date=2026-11-21&end_date=2026-11-22", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && resp.Header.Get("X-Data-Height") == "299" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("API after the failover: %d, X-Data-Height %q: %s", resp.StatusCode, resp.Header.Get("X-Data-Height"), b)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("API after the failover: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The new standby catches up with the new primary in its own time (on
	// a loaded machine, tens of seconds): reads return to it once it is
	// within max_replica_lag.
	var b []byte
	for deadline := time.Now().Add(45 * time.Second); ; {
		resp, err := http.Get("http://" + apiAddr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && strings.Contains(string(b), `"reads":"replicas"`) && strings.Contains(string(b), `"name":"read_urls[0]","usable":true`) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("readyz 45 s after the failover: %d %s", resp.StatusCode, b)
			var state string
			if err := c.Open(t, replica).NewRaw(`SELECT concat_ws(' ', pg_is_in_recovery(), pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn(),
				(SELECT string_agg(concat_ws(':', backend_type, wait_event_type, wait_event, state), ', ') FROM pg_stat_activity WHERE wait_event IS NOT NULL AND backend_type <> 'client backend'))`).
				Scan(context.Background(), &state); err != nil {
				state = err.Error()
			}
			t.Logf("the standby: in recovery, received, replayed, waits: %s", state)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	resp, err := http.Get("http://" + apiAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`chainlens_db_replica_usable{replica="read_urls[0]"} 1`, `chainlens_db_replica_lag_seconds{replica="read_urls[0]"}`,
		`chainlens_db_answer_reads_total{server="read_urls[0]"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	t.Logf("%d events acknowledged, %d after the failover; indexed through %d; %d analytics answers during the failover, all with data", total, total-before, h, asked.Load())
	logMu.Lock()
	defer logMu.Unlock()
	if promotedAt == 299 {
		t.Logf("the indexer had indexed every height before the failover")
	} else if !strings.Contains(logs["index"].String(), "resuming from the checkpoint") {
		t.Errorf("the indexer never met the failover:\n%s", logs["index"].String())
	}
}

// TestEveryRoleThroughPgbouncer runs every role through pgbouncer in
// transaction mode (their sessions — the indexing lock, LISTEN, the
// campaign selection's prepared statement — on database.session_url, the
// primary directly) with the API reading from a streaming replica, and a
// second deployment straight on one database: every analytics answer of
// the golden URL set is the same on both, and /track events land.
func TestEveryRoleThroughPgbouncer(t *testing.T) {
	c := testcluster.Start(t, 1, false)
	_, direct := testdb.New(t)
	node := startNode(t, "../../testdata/localnet/osmosis")
	type deployment struct{ cfg, addr, key string }
	deploy := func(name, database string) deployment {
		d := deployment{addr: freeAddr(t), cfg: filepath.Join(t.TempDir(), name+".yaml")}
		_ = os.WriteFile(d.cfg, []byte(fmt.Sprintf(`database: {%s}
api: {listen: %s, rate_limit: {per_second: 1000000, burst: 1000000}, quota: {credits: 1000000000000}}
log: {level: warn}
chains:
  - {id: localosmosis, kind: osmosis, rpc: [%s], poll_interval: 20ms}
`, database, d.addr, node)), 0o644)
		for _, args := range [][]string{{"migrate", "up"}, {"index", "--until", "299"}, {"aggregate", "--once"}} {
			if _, stderr, code := run(t, append(args, "--config", d.cfg)...); code != 0 {
				t.Fatalf("%s: %v: %s", name, args, stderr)
			}
		}
		key, stderr, code := run(t, "keys", "create", "--config", d.cfg, "--name", "all", "--scopes", "all")
		if code != 0 {
			t.Fatalf("%s: keys create: %s", name, stderr)
		}
		d.key = strings.TrimSpace(key)
		srv := exec.Command(bin, "serve", "--config", d.cfg)
		var stderrBuf strings.Builder
		srv.Stderr = &stderrBuf
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = srv.Process.Kill()
			_ = srv.Wait()
			if t.Failed() {
				t.Logf("%s serve stderr:\n%s", name, stderrBuf.String())
			}
		})
		waitHTTP(t, "http://"+d.addr+"/healthz")
		return d
	}
	pooled := deploy("pooled", fmt.Sprintf("url: %q, session_url: %q, read_urls: [%q]", c.Pooler, c.Primary, c.Reads[0]))
	plain := deploy("direct", fmt.Sprintf("url: %q", direct))
	c.WaitReplayed(t)

	client := &http.Client{Timeout: 30 * time.Second}
	get := func(d deployment, u string) (string, error) {
		req, _ := http.NewRequest("GET", "http://"+d.addr+u, nil)
		req.Header.Set("Authorization", "Bearer "+d.key)
		req.Header.Set("X-Request-Id", "same")
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s %s %s", resp.StatusCode, resp.Header.Get("X-Data-Height"), resp.Header.Get("X-Data-Time"), b), nil
	}
	// The replica is read from once its first probe found it in step.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, err := get(pooled, "/readyz")
		if err == nil && strings.Contains(r, `"reads":"replicas"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz: %s %v", r, err)
		}
	}
	raw, err := os.ReadFile("../../internal/golden/testdata/answers.txt")
	if err != nil {
		t.Fatal(err)
	}
	compared, answered := 0, 0
	// The campaign selection (a prepared statement on the session URL's
	// connections) answers too.
	urls := []string{"/campaign/osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh"}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(line)
		urls = append(urls, f[len(f)-1])
	}
	for _, u := range urls {
		a, err := get(pooled, u)
		if err != nil {
			t.Fatal(err)
		}
		b, err := get(plain, u)
		if err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Errorf("%s:\n through pgbouncer and a replica: %.300s\n direct: %.300s", u, a, b)
		}
		compared++
		if strings.HasPrefix(a, "200 ") {
			answered++
		}
	}
	if answered < 100 {
		t.Fatalf("only %d of %d URLs answered 200: the comparison says little", answered, compared)
	}
	t.Logf("%d answers identical (%d of them 200)", compared, answered)

	// /track through the pooler lands (committed by COPY in one transaction).
	status, id, body, err := postTrack(client, pooled.addr, pooled.key, fmt.Sprintf(`{"name":"trade_made","identity":{"type":"address","id":"osmo1w1"},"timestamp":%d}`, time.Now().UnixMilli()))
	if err != nil || status != 200 || id == "" {
		t.Fatalf("/track: %d %s %v", status, body, err)
	}
	primary := c.Open(t, c.Primary)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := primary.NewRaw("SELECT count(*) FROM tracked_events WHERE id = ?", id).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the /track event %s was not stored", id)
		}
	}
}
