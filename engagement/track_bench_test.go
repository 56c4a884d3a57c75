package engagement_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkTrackHTTP posts distinct events to the real server in process
// from 64 concurrent clients; each op is one acknowledged (committed) event.
// The in-process client shares the CPU, so scripts/bench-track.sh (wrk and
// pgbench against a separate process) is the number of record; this one is
// for profiles:
//
//	go test -run '^$' -bench BenchmarkTrackHTTP -benchtime 20000x -cpuprofile cpu.out ./engagement/
func BenchmarkTrackHTTP(b *testing.B) {
	e := newEnv(b, nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				body := fmt.Sprintf(`{"name":"trade_made","identity":{"type":"address","id":"osmo1w%d"},"meta":{"messageId":"m-%d"},"attributes":{"amount_usd":12.5},"timestamp":%d}`,
					i, i, now.UnixMilli())
				req, _ := http.NewRequest("POST", e.srv.URL+"/track", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+e.sk)
				req.Header.Set("Content-Type", "application/json")
				resp, err := e.client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
}
