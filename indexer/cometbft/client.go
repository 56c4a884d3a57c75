// Package cometbft fetches heights from CometBFT nodes over JSON-RPC: several
// endpoints with failover and per-endpoint health, retries with exponential
// backoff and jitter, per-method timeouts long enough for 100 MB
// block_results, and typed height errors (pruned, above the tip).
package cometbft

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	rpctypes "github.com/cometbft/cometbft/rpc/jsonrpc/types"
)

// MaxResponseBytes bounds one response body (Osmosis epoch block_results exceed 100 MB).
const MaxResponseBytes = 1 << 30

// Timeouts per method: block_results can be very large.
var timeouts = map[string]time.Duration{
	"status":        10 * time.Second,
	"block":         60 * time.Second,
	"block_results": 5 * time.Minute,
	"abci_query":    60 * time.Second,
}

// Retry is the retry policy of one call.
type Retry struct {
	Attempts int           // total attempts over all endpoints; default 6
	Base     time.Duration // first backoff; default 200ms
	Max      time.Duration // backoff cap; default 10s
	// AttemptTimeout, when positive, caps the time of one attempt below the
	// per-method timeout.
	AttemptTimeout time.Duration
}

// Client calls a set of CometBFT RPC endpoints.
type Client struct {
	endpoints []*endpoint
	http      *http.Client
	retry     Retry
	log       *slog.Logger
	nextID    atomic.Int64
}

type endpoint struct {
	url string

	mu          sync.Mutex
	failures    int       // consecutive
	downUntil   time.Time // skipped until then unless every endpoint is down
	lastErr     string
	calls, errs int64
}

// EndpointHealth describes one endpoint for status and metrics.
type EndpointHealth struct {
	URL                 string
	ConsecutiveFailures int
	Calls, Errors       int64
	LastError           string
	Down                bool
}

// New returns a client for the endpoints (tried in order of health).
func New(urls []string, retry Retry, log *slog.Logger) (*Client, error) {
	if len(urls) == 0 {
		return nil, errors.New("cometbft: no RPC endpoint")
	}
	if retry.Attempts <= 0 {
		retry.Attempts = 6
	}
	if retry.Base <= 0 {
		retry.Base = 200 * time.Millisecond
	}
	if retry.Max <= 0 {
		retry.Max = 10 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{retry: retry, log: log, http: &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second, ResponseHeaderTimeout: 5 * time.Minute,
	}}}
	for _, u := range urls {
		c.endpoints = append(c.endpoints, &endpoint{url: u})
	}
	return c, nil
}

// Health reports the state of every endpoint.
func (c *Client) Health() []EndpointHealth {
	out := make([]EndpointHealth, len(c.endpoints))
	now := time.Now()
	for i, e := range c.endpoints {
		e.mu.Lock()
		out[i] = EndpointHealth{URL: e.url, ConsecutiveFailures: e.failures, Calls: e.calls, Errors: e.errs, LastError: e.lastErr, Down: now.Before(e.downUntil)}
		e.mu.Unlock()
	}
	return out
}

// pick returns the endpoint to try for attempt n: healthy endpoints in
// configured order first (rotating with n), then the least failed.
func (c *Client) pick(n int) *endpoint {
	now := time.Now()
	var up []*endpoint
	for _, e := range c.endpoints {
		e.mu.Lock()
		if !now.Before(e.downUntil) {
			up = append(up, e)
		}
		e.mu.Unlock()
	}
	if len(up) > 0 {
		return up[n%len(up)]
	}
	best := c.endpoints[0]
	for _, e := range c.endpoints[1:] {
		e.mu.Lock()
		bf := best.failures
		f := e.failures
		e.mu.Unlock()
		if f < bf {
			best = e
		}
	}
	return best
}

func (e *endpoint) record(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if err == nil {
		e.failures = 0
		e.downUntil = time.Time{}
		return
	}
	e.errs++
	e.failures++
	e.lastErr = err.Error()
	if e.failures >= 3 {
		e.downUntil = time.Now().Add(min(time.Duration(e.failures)*2*time.Second, time.Minute))
	}
}

// RPCError is a JSON-RPC error answered by a node.
type RPCError struct {
	Code    int
	Message string
	Data    string
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("rpc error %d: %s: %s", e.Code, e.Message, e.Data)
}

// HeightError is a node's refusal of a height: above its tip, or pruned.
type HeightError struct {
	Height int64
	// Bound is the node's current height (TooHigh) or its lowest available height (Pruned).
	Bound   int64
	TooHigh bool
	Pruned  bool
	Err     *RPCError
}

func (e *HeightError) Error() string {
	switch {
	case e.Pruned:
		return fmt.Sprintf("height %d is not available on the node (pruned; lowest height is %d)", e.Height, e.Bound)
	case e.TooHigh:
		return fmt.Sprintf("height %d is above the node's tip %d", e.Height, e.Bound)
	}
	return e.Err.Error()
}

var (
	reTooHigh = regexp.MustCompile(`height (\d+) must be less than or equal to the current blockchain height (\d+)`)
	rePruned  = regexp.MustCompile(`height (\d+) is not available, lowest height is (\d+)`)
)

// classify turns a JSON-RPC error into a HeightError when it is one.
func classify(e *RPCError) error {
	text := e.Message + " " + e.Data
	if m := reTooHigh.FindStringSubmatch(text); m != nil {
		h, _ := strconv.ParseInt(m[1], 10, 64)
		b, _ := strconv.ParseInt(m[2], 10, 64)
		return &HeightError{Height: h, Bound: b, TooHigh: true, Err: e}
	}
	if m := rePruned.FindStringSubmatch(text); m != nil {
		h, _ := strconv.ParseInt(m[1], 10, 64)
		b, _ := strconv.ParseInt(m[2], 10, 64)
		return &HeightError{Height: h, Bound: b, Pruned: true, Err: e}
	}
	return e
}

// retryable reports whether another attempt may succeed: transport
// failures, 5xx/429 answers, truncated bodies and internal errors other
// than height refusals.
func retryable(err error) bool {
	var he *HeightError
	if errors.As(err, &he) {
		return false
	}
	var re *RPCError
	if errors.As(err, &re) {
		return re.Code == -32603 || re.Code == -32000
	}
	return !errors.Is(err, context.Canceled)
}

// Call invokes method with params on the first endpoint that answers,
// retrying with backoff; result is the JSON `result` member.
func (c *Client) Call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	timeout := timeouts[method]
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	if c.retry.AttemptTimeout > 0 {
		timeout = min(timeout, c.retry.AttemptTimeout)
	}
	rawParams, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("cometbft %s: %w", method, err)
	}
	var lastErr error
	for attempt := range c.retry.Attempts {
		if attempt > 0 {
			if err := sleep(ctx, backoff(c.retry, attempt)); err != nil {
				return nil, err
			}
		}
		e := c.pick(attempt)
		res, err := c.callOnce(ctx, e, method, rawParams, timeout)
		var re *RPCError
		if errors.As(err, &re) {
			e.record(nil) // the node answered; it is healthy
			err = classify(re)
		} else {
			e.record(err)
		}
		if err == nil {
			return res, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !retryable(err) {
			return nil, fmt.Errorf("cometbft %s: %w", method, err)
		}
		c.log.Debug("rpc call failed; retrying", "method", method, "endpoint", e.url, "attempt", attempt+1, "err", err)
	}
	return nil, fmt.Errorf("cometbft %s: %d attempts failed: %w", method, c.retry.Attempts, lastErr)
}

func (c *Client) callOnce(ctx context.Context, e *endpoint, method string, params json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id := rpctypes.JSONRPCIntID(c.nextID.Add(1))
	body, err := json.Marshal(rpctypes.NewRPCRequest(id, method, params))
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read body: %w", e.url, err)
	}
	if len(data) > MaxResponseBytes {
		return nil, fmt.Errorf("%s: response larger than %d bytes", e.url, MaxResponseBytes)
	}
	var r rpctypes.RPCResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d, bad JSON-RPC answer: %w", e.url, resp.StatusCode, err)
	}
	if r.Error != nil {
		return nil, &RPCError{Code: r.Error.Code, Message: r.Error.Message, Data: r.Error.Data}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", e.url, resp.StatusCode)
	}
	if len(r.Result) == 0 || string(r.Result) == "null" {
		return nil, fmt.Errorf("%s: empty result", e.url)
	}
	return r.Result, nil
}

// backoff is exponential with full jitter, capped.
func backoff(r Retry, attempt int) time.Duration {
	d := r.Base << min(attempt-1, 20)
	if d > r.Max || d <= 0 {
		d = r.Max
	}
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
