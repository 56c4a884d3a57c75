package cometbft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// answerServer answers every request with body; chunked leaves out the
// Content-Length; failFirst answers the first n requests with HTTP 500.
type answerServer struct {
	body      string
	chunked   bool
	failFirst int64
	cutAfter  int // when > 0: close the connection after that many bytes
	n         atomic.Int64
}

func (s *answerServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.n.Add(1) <= s.failFirst {
		http.Error(w, "upstream exploded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if !s.chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(s.body)))
	}
	if s.cutAfter > 0 {
		_, _ = io.WriteString(w, s.body[:s.cutAfter])
		w.(http.Flusher).Flush()
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		}
		return
	}
	// Several writes, as a node streaming a large answer.
	for b := s.body; len(b) > 0; {
		n := min(len(b), 1000)
		_, _ = io.WriteString(w, b[:n])
		b = b[n:]
	}
}

func testClient(t *testing.T, h http.Handler) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New([]string{srv.URL}, Retry{Attempts: 3, Base: time.Millisecond, Max: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bigResult is a /block_results result of about n bytes.
func bigResult(n int) string {
	var b strings.Builder
	b.WriteString(`{"height":"5","txs_results":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"code":0,"log":"tx %d"}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestCallAnswerLanes checks the lane rule: an answer up to the in-memory
// limit is read whole (by Content-Length, or by a first read when there is
// none), a larger one is streamed from the first byte of its result.
func TestCallAnswerLanes(t *testing.T) {
	result := bigResult(50_000)
	body := `{"jsonrpc":"2.0","id":7,"result":` + result + `}`
	for _, chunked := range []bool{false, true} {
		for _, limit := range []int64{int64(len(body)), int64(len(body)) - 1, 1000, 0} {
			t.Run(fmt.Sprintf("chunked=%v limit=%d", chunked, limit), func(t *testing.T) {
				c := testClient(t, &answerServer{body: body, chunked: chunked})
				a, err := c.BlockResultsAnswer(context.Background(), 5, limit)
				if err != nil {
					t.Fatal(err)
				}
				wantSize := int64(len(body))
				if chunked {
					wantSize = -1
				}
				if a.Size != wantSize {
					t.Errorf("size %d, want %d", a.Size, wantSize)
				}
				if limit >= int64(len(body)) {
					if a.Stream != nil || string(a.Result) != result {
						t.Fatalf("want the whole result in memory, got stream %v", a.Stream != nil)
					}
					return
				}
				if a.Stream == nil {
					t.Fatal("want a stream")
				}
				defer a.Stream.Close()
				var got json.RawMessage
				if err := json.NewDecoder(a.Stream).Decode(&got); err != nil {
					t.Fatal(err)
				}
				if string(got) != result {
					t.Fatalf("streamed result differs: %d bytes, want %d", len(got), len(result))
				}
			})
		}
	}
}

// TestCallAnswerEnvelope reads streamed envelopes of every shape: members
// in any order and spacing, typed errors, an empty result.
func TestCallAnswerEnvelope(t *testing.T) {
	pad := strings.Repeat(" ", 2000) // larger than the limit: streamed
	tests := []struct {
		name, body string
		result     string
		check      func(error) bool
	}{
		{"result first, spaced", `{ "result"` + pad + `:` + pad + `{"height":"5"} , "jsonrpc":"2.0","id":1}`, `{"height":"5"}`, nil},
		{"id and jsonrpc first", `{"jsonrpc":"2.0","id":{"x":[1,2]},"result":{"height":"5"}}` + pad, `{"height":"5"}`, nil},
		{"null error member", `{"jsonrpc":"2.0","id":1,"error":null,"result":{"height":"5"}}` + pad, `{"height":"5"}`, nil},
		{"above the tip", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"height 9 must be less than or equal to the current blockchain height 5"}}` + pad, "",
			func(err error) bool {
				var he *HeightError
				return errors.As(err, &he) && he.TooHigh && he.Height == 9 && he.Bound == 5
			}},
		{"pruned", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"height 2 is not available, lowest height is 10"}}` + pad, "",
			func(err error) bool {
				var he *HeightError
				return errors.As(err, &he) && he.Pruned && he.Bound == 10
			}},
		{"other rpc error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":""}}` + pad, "",
			func(err error) bool {
				var re *RPCError
				return errors.As(err, &re) && re.Code == -32601
			}},
		{"null result", `{"jsonrpc":"2.0","id":1,"result":null}` + pad, "",
			func(err error) bool { return err != nil && strings.Contains(err.Error(), "empty result") }},
		{"no result", `{"jsonrpc":"2.0","id":1}` + pad, "",
			func(err error) bool { return err != nil && strings.Contains(err.Error(), "empty result") }},
		{"not JSON-RPC", `[1,2,3]` + pad, "",
			func(err error) bool { return err != nil && strings.Contains(err.Error(), "bad JSON-RPC answer") }},
	}
	for _, tc := range tests {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s chunked=%v", tc.name, chunked), func(t *testing.T) {
				srv := &answerServer{body: tc.body, chunked: chunked}
				c := testClient(t, srv)
				a, err := c.BlockResultsAnswer(context.Background(), 5, 1000)
				if tc.check != nil {
					if a.Stream != nil {
						a.Stream.Close()
					}
					if !tc.check(err) {
						t.Fatalf("err = %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer a.Stream.Close()
				var got json.RawMessage
				if err := json.NewDecoder(a.Stream).Decode(&got); err != nil || string(got) != tc.result {
					t.Fatalf("result %s (%v), want %s", got, err, tc.result)
				}
			})
		}
	}
}

// TestCallAnswerRetriesAndBreaks: failures before the result are retried
// by the client; a stream cut afterwards reports ErrStreamBroken.
func TestCallAnswerRetriesAndBreaks(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"result":` + bigResult(100_000) + `}`
	srv := &answerServer{body: body, failFirst: 2}
	c := testClient(t, srv)
	s, err := c.BlockResultsStream(context.Background(), 5)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, s)
	s.Close()
	if err != nil || srv.n.Load() != 3 || n < 100_000 {
		t.Fatalf("read %d bytes after %d requests: %v", n, srv.n.Load(), err)
	}

	for _, chunked := range []bool{false, true} {
		srv = &answerServer{body: body, cutAfter: 50_000, chunked: chunked}
		c = testClient(t, srv)
		s, err = c.BlockResultsStream(context.Background(), 5)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(io.Discard, s)
		s.Close()
		if !errors.Is(err, ErrStreamBroken) {
			t.Fatalf("chunked=%v: cut stream: %v", chunked, err)
		}
		if h := c.Health()[0]; h.Errors != 1 || h.Calls != 2 {
			t.Errorf("chunked=%v: endpoint health %+v: the break must count against it", chunked, h)
		}
	}

}

// TestStatusOfSeveralEndpoints: the status of several endpoints is the
// highest tip and the lowest earliest height of those that answer, and
// endpoints of different chains are refused.
func TestStatusOfSeveralEndpoints(t *testing.T) {
	status := func(network string, latest, earliest int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":{"node_info":{"network":%q,"version":"0.38.17"},"sync_info":{"latest_block_height":"%d","earliest_block_height":"%d","latest_block_time":"2026-01-01T00:00:00Z"}}}`, network, latest, earliest)
	}
	serve := func(body string) string {
		srv := httptest.NewServer(&answerServer{body: body})
		t.Cleanup(srv.Close)
		return srv.URL
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	cases := []struct {
		name             string
		urls             []string
		latest, earliest int64
		wantErr          string
	}{
		{"pruned and behind", []string{serve(status("a-1", 500, 400)), serve(status("a-1", 450, 1))}, 500, 1, ""},
		{"one down", []string{down.URL, serve(status("a-1", 450, 7))}, 450, 7, ""},
		{"other chain", []string{serve(status("a-1", 500, 1)), serve(status("b-1", 500, 1))}, 0, 0, `serves "b-1", another "a-1"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, err := New(c.urls, Retry{Attempts: 2, Base: time.Millisecond, Max: time.Millisecond}, nil)
			if err != nil {
				t.Fatal(err)
			}
			st, err := cl.Status(context.Background())
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || st.LatestHeight != c.latest || st.EarliestHeight != c.earliest || st.Network != "a-1" {
				t.Fatalf("status = %+v, %v; want tip %d, earliest %d", st, err, c.latest, c.earliest)
			}
		})
	}
}

// TestRefusedByEveryEndpoint: a height every endpoint refuses is pruned
// only when each of them pruned it; when one is behind, the height may
// still come, whatever the order of the endpoints.
func TestRefusedByEveryEndpoint(t *testing.T) {
	pruned := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"height 500 is not available, lowest height is 1000"}}`
	behind := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"height 500 must be less than or equal to the current blockchain height 300"}}`
	serve := func(body string) string {
		srv := httptest.NewServer(&answerServer{body: body})
		t.Cleanup(srv.Close)
		return srv.URL
	}
	p1, p2, b := serve(pruned), serve(pruned), serve(behind)
	cases := []struct {
		name                  string
		urls                  []string
		wantPruned, wantAbove bool
	}{
		{"pruned, then behind", []string{p1, b}, false, true},
		{"behind, then pruned", []string{b, p1}, false, true},
		{"both pruned", []string{p1, p2}, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, err := New(c.urls, Retry{Attempts: 4, Base: time.Millisecond, Max: time.Millisecond}, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = cl.Block(context.Background(), 500)
			var he *HeightError
			if !errors.As(err, &he) || he.Pruned != c.wantPruned || he.TooHigh != c.wantAbove {
				t.Fatalf("err = %v; want pruned %v, too high %v", err, c.wantPruned, c.wantAbove)
			}
		})
	}
}
