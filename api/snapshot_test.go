package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

// TestAnswerIsOneSnapshot: an aggregator run that commits between two
// statements of one answer is seen by neither (the answer and its
// freshness read one REPEATABLE READ, READ ONLY snapshot); without the
// snapshot the two statements disagree, so the test can fail.
func TestAnswerIsOneSnapshot(t *testing.T) {
	for _, c := range []struct {
		name     string
		snapshot bool
		want     string
	}{
		{"one snapshot per answer", true, `{"before":1,"after":1}`},
		{"statement by statement", false, `{"before":1,"after":2}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var db *bun.DB
			e := newEnvWith(t, func(o *api.Options, d *bun.DB) {
				db = d
				if c.snapshot {
					o.DB = d
				}
				o.Config.CacheTTL = 0
				o.Handlers.JSON[route.Dex2Pairs] = func(ctx context.Context, req *api.Request) (*api.Response, error) {
					var before, after int
					if err := api.Reader(ctx, d).NewRaw("SELECT count(*) FROM report_rows").Scan(ctx, &before); err != nil {
						return nil, err
					}
					// An aggregator run commits on its own connection meanwhile.
					if _, err := d.ExecContext(context.Background(), "INSERT INTO report_rows VALUES (2)"); err != nil {
						return nil, err
					}
					if err := api.Reader(ctx, d).NewRaw("SELECT count(*) FROM report_rows").Scan(ctx, &after); err != nil {
						return nil, err
					}
					return &api.Response{Body: map[string]int{"before": before, "after": after}}, nil
				}
			})
			if _, err := db.ExecContext(context.Background(), "CREATE TABLE report_rows (n int); INSERT INTO report_rows VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			resp, body := e.do(t, "GET", "/dex/pairs", e.key, nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			var got map[string]int
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprintf(`{"before":%d,"after":%d}`, got["before"], got["after"]); s != c.want {
				t.Errorf("got %s, want %s", s, c.want)
			}
		})
	}
}

// TestAnswerSnapshotIsReadOnly: a handler cannot write through its snapshot.
func TestAnswerSnapshotIsReadOnly(t *testing.T) {
	e := newEnvWith(t, func(o *api.Options, d *bun.DB) {
		o.DB = d
		o.Handlers.JSON[route.Dex2Pairs] = func(ctx context.Context, req *api.Request) (*api.Response, error) {
			_, err := api.Reader(ctx, d).ExecContext(ctx, "CREATE TABLE should_not_exist (n int)")
			return &api.Response{Body: map[string]string{"err": fmt.Sprint(err)}}, nil
		}
	})
	_, body := e.do(t, "GET", "/dex/pairs", e.key, nil)
	var got map[string]string
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if got["err"] == "<nil>" {
		t.Fatal("a write through the answer's snapshot succeeded")
	}
	var n int
	if err := e.db.NewRaw("SELECT count(*) FROM pg_tables WHERE tablename = 'should_not_exist'").Scan(context.Background(), &n); err != nil || n != 0 {
		t.Fatalf("table created (%d, %v)", n, err)
	}
}

// TestAnswerPastItsDeadlineStopsOnTheServer: a handler whose statement
// outlives the handler timeout is answered 503 and its statement is
// stopped by Postgres itself, not left running; without the snapshot's
// statement_timeout the statement goes on after the answer.
func TestAnswerPastItsDeadlineStopsOnTheServer(t *testing.T) {
	const marker = "chainlens_deadline_probe"
	e := newEnvWith(t, func(o *api.Options, d *bun.DB) {
		o.DB = d
		o.Config.CacheTTL = 0
		o.Config.Timeouts.Handler = config.Duration(300 * time.Millisecond)
		o.Handlers.JSON[route.Dex2Pairs] = func(ctx context.Context, req *api.Request) (*api.Response, error) {
			var n int
			err := api.Reader(ctx, d).NewRaw("SELECT 1 FROM pg_sleep(30) /* "+marker+" */").Scan(ctx, &n)
			return &api.Response{Body: n}, err
		}
	})
	resp, body := e.do(t, "GET", "/dex/pairs", e.key, nil)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("%d %s, want 503", resp.StatusCode, body)
	}
	running := func() int {
		var n int
		if err := e.db.NewRaw("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE ? AND pid <> pg_backend_pid()",
			"%"+marker+" */%").Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(3 * time.Second)
	for running() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the statement is still running on the server 3 s after its answer's deadline")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
