package problem

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestToStatus(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, 200},
		{BadParam("limit", "must be at most 1000"), 400},
		{fmt.Errorf("load pool: %w", ErrNotFound), 404},
		{fmt.Errorf("chain: %w", ErrNotIndexed), 503},
		{ErrNotImplemented, 501},
		{Status(http.StatusTooManyRequests, "slow down"), 429},
		{fmt.Errorf("wrapped: %w", Status(403, "no")), 403},
		{errors.New("db exploded"), 500},
	}
	for _, c := range cases {
		if got := ToStatus(c.err); got != c.want {
			t.Errorf("ToStatus(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestWriteShapes(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		wantStatus int
		wantBody   string
		wantRetry  string
	}{
		{"bad param", BadParam("time_resolution", "must be one of hour, day, week"), 400,
			`{"type":"/problems/invalid-parameter","title":"Invalid parameter","status":400,"detail":"time_resolution must be one of hour, day, week","instance":"/x","message":"time_resolution must be one of hour, day, week","invalid_params":[{"name":"time_resolution","reason":"must be one of hour, day, week"}]}`, ""},
		{"internal hides text", errors.New("pq: password leaked"), 500,
			`{"type":"/problems/internal","title":"Internal error","status":500,"detail":"internal error","instance":"/x","message":"internal error"}`, ""},
		{"rate limited", &Error{Status: 429, Detail: "rate limit exceeded", RetryAfter: 1500 * time.Millisecond}, 429,
			`{"type":"/problems/rate-limited","title":"Too many requests","status":429,"detail":"rate limit exceeded","instance":"/x","message":"rate limit exceeded"}`, "2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Write(rec, From(c.err, "/x"))
			if rec.Code != c.wantStatus {
				t.Fatalf("status %d, want %d", rec.Code, c.wantStatus)
			}
			if ct := rec.Header().Get("Content-Type"); ct != ContentType {
				t.Fatalf("content type %q", ct)
			}
			var got, want any
			_ = json.Unmarshal(rec.Body.Bytes(), &got)
			_ = json.Unmarshal([]byte(c.wantBody), &want)
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				t.Fatalf("body\n got %s\nwant %s", gb, wb)
			}
			if ra := rec.Header().Get("Retry-After"); ra != c.wantRetry {
				t.Fatalf("Retry-After %q, want %q", ra, c.wantRetry)
			}
		})
	}
}
