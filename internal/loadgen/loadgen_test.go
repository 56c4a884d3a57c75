package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted
	}
	cases := []struct {
		name string
		in   []time.Duration
		p    int
		want time.Duration
	}{
		{"empty", nil, 99, 0},
		{"one", ms(7), 50, 7 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"max", ms(hundred...), 100, 100 * time.Millisecond},
		{"p90 of four", ms(1, 2, 3, 4), 90, 4 * time.Millisecond},
	}
	for _, c := range cases {
		if got := Percentile(c.in, c.p); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRunRateAndLabels runs 1 s at 200 requests/s against two labels, one
// answering 500: every due request is sent, split round-robin, errors
// counted, and the slow label's latency shows its delay.
func TestRunRateAndLabels(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("X-K") != "v" {
			w.WriteHeader(400)
			return
		}
		if r.URL.Path == "/slow" {
			time.Sleep(20 * time.Millisecond)
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(200)
	}))
	defer srv.Close()
	res, err := Run(context.Background(), []Target{{"fast", srv.URL + "/fast"}, {"slow", srv.URL + "/slow"}},
		Options{Rate: 200, Duration: time.Second, Header: http.Header{"X-K": {"v"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Label != "fast" || res[1].Label != "slow" {
		t.Fatalf("results %+v", res)
	}
	if res[0].Count != 100 || res[1].Count != 100 || hits.Load() != 200 {
		t.Errorf("counts %d %d, hits %d; want 100, 100, 200", res[0].Count, res[1].Count, hits.Load())
	}
	if res[0].Errors != 0 || res[1].Errors != 100 || res[0].Dropped+res[1].Dropped != 0 {
		t.Errorf("errors %d %d dropped %d %d", res[0].Errors, res[1].Errors, res[0].Dropped, res[1].Dropped)
	}
	if res[1].P50 < 20*time.Millisecond {
		t.Errorf("slow p50 %v < its 20 ms delay", res[1].P50)
	}
}
