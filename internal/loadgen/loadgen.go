// Package loadgen sends HTTP requests at a fixed rate (open loop: a slow
// answer does not delay the next request) and reports latency percentiles
// per label. Latency is measured from the time a request was due, not from
// when it was sent, so a saturated server cannot hide its queueing
// (coordinated omission).
package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Target is one URL, reported under Label.
type Target struct {
	Label string
	URL   string
}

// Options configure a run.
type Options struct {
	Rate     int           // requests per second, over all targets
	Duration time.Duration // how long requests are started
	Header   http.Header   // sent with every request
	// MaxInFlight bounds concurrent requests; a request due beyond it is
	// counted as dropped. Default 4 × Rate.
	MaxInFlight int
	Client      *http.Client
}

// Result is the outcome of one label.
type Result struct {
	Label    string
	Count    int
	Errors   int // transport errors and non-2xx answers
	Dropped  int
	P50, P90 time.Duration
	P99, Max time.Duration
}

// MaxRate is the highest rate Run sends at (requests per second).
const MaxRate = 100_000

// Run sends requests to targets round-robin until the duration ends and
// every started request has finished.
func Run(ctx context.Context, targets []Target, o Options) ([]Result, error) {
	if o.Rate < 1 || o.Duration <= 0 || len(targets) == 0 {
		return nil, fmt.Errorf("loadgen: need a rate, a duration and targets")
	}
	if o.Rate > MaxRate {
		return nil, fmt.Errorf("loadgen: a rate of at most %d requests per second", MaxRate)
	}
	if o.Duration < time.Second/time.Duration(o.Rate) {
		return nil, fmt.Errorf("loadgen: a duration of %s holds no request at %d per second", o.Duration, o.Rate)
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 4 * o.Rate
	}
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: o.MaxInFlight}}
	}
	type sample struct {
		label   int
		latency time.Duration
		err     bool
	}
	var (
		mu      sync.Mutex
		samples []sample
		dropped = make([]int, len(targets))
		wg      sync.WaitGroup
		slots   = make(chan struct{}, o.MaxInFlight)
	)
	interval := time.Second / time.Duration(o.Rate)
	start := time.Now()
	total := int(o.Duration / interval)
	for i := 0; i < total; i++ {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				wg.Wait()
				return nil, ctx.Err()
			}
		}
		ti := i % len(targets)
		select {
		case slots <- struct{}{}:
		default:
			dropped[ti]++
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, targets[ti].URL, nil)
			failed := err != nil
			if err == nil {
				for k, v := range o.Header {
					req.Header[k] = v
				}
				resp, err := client.Do(req)
				if err != nil {
					failed = true
				} else {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					failed = resp.StatusCode < 200 || resp.StatusCode > 299
				}
			}
			lat := time.Since(due)
			mu.Lock()
			samples = append(samples, sample{ti, lat, failed})
			mu.Unlock()
		}()
	}
	wg.Wait()
	byLabel := map[string]*Result{}
	lats := map[string][]time.Duration{}
	var order []string
	for i, t := range targets {
		if _, ok := byLabel[t.Label]; !ok {
			byLabel[t.Label] = &Result{Label: t.Label}
			order = append(order, t.Label)
		}
		byLabel[t.Label].Dropped += dropped[i]
	}
	for _, s := range samples {
		r := byLabel[targets[s.label].Label]
		r.Count++
		if s.err {
			r.Errors++
		}
		lats[r.Label] = append(lats[r.Label], s.latency)
	}
	out := make([]Result, 0, len(order))
	for _, l := range order {
		r := byLabel[l]
		r.P50, r.P90, r.P99, r.Max = Percentile(lats[l], 50), Percentile(lats[l], 90), Percentile(lats[l], 99), Percentile(lats[l], 100)
		out = append(out, *r)
	}
	return out, nil
}

// Percentile is the nearest-rank p-th percentile of ds (0 for none).
func Percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 × n)
	if rank < 1 {
		rank = 1
	}
	return s[min(rank, len(s))-1]
}
