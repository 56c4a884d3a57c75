package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/uptrace/bun"
)

// TestTrackSurvivesSIGKILL posts events to a real `chainlens serve` process
// from many connections and SIGKILLs it mid-load, three times: every event
// answered 200 is in the database exactly once.
func TestTrackSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	db, cfg, apiAddr, key := trackServer(t)

	var (
		mu    sync.Mutex
		acked = map[string]string{} // event id -> messageId
		seq   atomic.Int64
	)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for round := range 3 {
		srv := exec.Command(bin, "serve", "--config", cfg)
		stderrPipe, _ := srv.StderrPipe()
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			s := bufio.NewScanner(stderrPipe)
			for s.Scan() {
			}
		}()
		waitHTTP(t, "http://"+apiAddr+"/healthz")

		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var roundAcks atomic.Int64
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					i := seq.Add(1)
					msg := fmt.Sprintf("m-%d", i)
					body := fmt.Sprintf(`{"name":"trade_made","identity":{"type":"address","id":"osmo1w%d"},"meta":{"messageId":%q},"timestamp":%d}`,
						i, msg, time.Now().UnixMilli())
					status, id, b, err := postTrack(client, apiAddr, key, body)
					if err != nil {
						return // the server is gone
					}
					if status != 200 {
						continue // 503 when the queue is full: not acknowledged
					}
					if id == "" {
						t.Errorf("answer %s", b)
						return
					}
					mu.Lock()
					acked[id] = msg
					mu.Unlock()
					roundAcks.Add(1)
				}
			}()
		}
		// Kill once the load is flowing: after a few hundred acknowledgements.
		deadline := time.Now().Add(20 * time.Second)
		for roundAcks.Load() < int64(300+200*round) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		_ = srv.Process.Kill()
		_ = srv.Wait()
		stop()
		wg.Wait()
		if roundAcks.Load() == 0 {
			t.Fatalf("round %d: no event acknowledged", round)
		}
	}

	var rows []struct {
		ID  string `bun:"id"`
		Msg string `bun:"msg"`
	}
	if err := db.NewRaw(`SELECT id, meta->>'messageId' AS msg FROM tracked_events`).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	stored := map[string]int{}
	for _, r := range rows {
		stored[r.ID]++
		if m, ok := acked[r.ID]; ok && m != r.Msg {
			t.Errorf("event %s stored with messageId %s, acknowledged for %s", r.ID, r.Msg, m)
		}
	}
	lost := 0
	for id := range acked {
		if stored[id] != 1 {
			lost++
			if lost < 5 {
				t.Errorf("acknowledged event %s stored %d times", id, stored[id])
			}
		}
	}
	t.Logf("%d events acknowledged over 3 SIGKILLs, %d rows stored, %d acknowledged events missing", len(acked), len(rows), lost)
}

// TestServeStopsOnSIGTERM: an idle `chainlens serve` exits within a second
// of SIGTERM (a wait for data-change announcements held it 4.5 s), and one
// under /track load exits promptly too, cleanly, with every acknowledged
// event stored.
func TestServeStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	db, cfg, apiAddr, key := trackServer(t)
	client := &http.Client{Timeout: 10 * time.Second}
	for _, c := range []struct {
		name    string
		load    bool
		within  time.Duration
		minAcks int64
	}{
		{"idle", false, time.Second, 0},
		{"under /track load", true, 5 * time.Second, 50},
	} {
		srv := exec.Command(bin, "serve", "--config", cfg)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		waitHTTP(t, "http://"+apiAddr+"/healthz")
		var acked sync.Map
		var acks atomic.Int64
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		if c.load {
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ctx.Err() == nil; i++ {
						body := fmt.Sprintf(`{"name":"trade_made","identity":{"type":"address","id":"osmo1s%d"},"meta":{"messageId":"s-%d-%d"},"timestamp":%d}`,
							w, w, i, time.Now().UnixMilli())
						status, id, _, err := postTrack(client, apiAddr, key, body)
						if err != nil {
							return // the server is gone
						}
						if status == 200 && id != "" {
							acked.Store(id, true)
							acks.Add(1)
						}
					}
				}()
			}
			for deadline := time.Now().Add(10 * time.Second); acks.Load() < c.minAcks && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
		}
		start := time.Now()
		_ = srv.Process.Signal(syscall.SIGTERM)
		err := srv.Wait()
		took := time.Since(start)
		stop()
		wg.Wait()
		if err != nil {
			t.Errorf("%s: serve exited with %v", c.name, err)
		}
		if took > c.within {
			t.Errorf("%s: serve took %s to exit, want at most %s", c.name, took, c.within)
		}
		var missing int
		acked.Range(func(id, _ any) bool {
			var n int
			if err := db.NewRaw("SELECT count(*) FROM tracked_events WHERE id = ?", id).Scan(context.Background(), &n); err != nil || n != 1 {
				missing++
			}
			return true
		})
		if missing > 0 || acks.Load() < c.minAcks {
			t.Errorf("%s: %d of %d acknowledged events not stored", c.name, missing, acks.Load())
		}
	}
}

// trackServer prepares a `chainlens serve` for /track load: a migrated
// database, a config with no rate limit and its listen address, and an
// engagement key.
func trackServer(t *testing.T) (db *bun.DB, cfg, apiAddr, key string) {
	t.Helper()
	db, dbURL := testdb.New(t)
	apiAddr = freeAddr(t)
	cfg = filepath.Join(t.TempDir(), "c.yaml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf(`database: {url: %q}
api: {listen: %s, rate_limit: {per_second: 1000000, burst: 1000000}, quota: {credits: 1000000000000}}
log: {level: error}
`, dbURL, apiAddr)), 0o644)
	if _, stderr, code := run(t, "migrate", "up", "--config", cfg); code != 0 {
		t.Fatalf("migrate: %s", stderr)
	}
	key, stderr, code := run(t, "keys", "create", "--config", cfg, "--name", "site", "--scopes", "engagement")
	if code != 0 {
		t.Fatalf("keys create: %s", stderr)
	}
	return db, cfg, apiAddr, strings.TrimSpace(key)
}

// postTrack posts one event to /track and returns the answer's status,
// the event id it acknowledged ("" when none) and its body.
func postTrack(client *http.Client, apiAddr, key, body string) (status int, id string, answer []byte, err error) {
	req, _ := http.NewRequest("POST", "http://"+apiAddr+"/track", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	answer, _ = io.ReadAll(resp.Body)
	var a struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(answer, &a)
	return resp.StatusCode, a.ID, answer, nil
}
