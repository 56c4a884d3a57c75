// Package cometbft fetches heights from CometBFT nodes over JSON-RPC: several
// endpoints with failover and per-endpoint health, retries with exponential
// backoff and jitter, per-method timeouts long enough for 100 MB
// block_results, answers too large for memory handed over as a stream
// (CallAnswer), and typed height errors (pruned, above the tip).
package cometbft

import (
	"bufio"
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

	"github.com/bytedance/sonic"
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

// pick returns the endpoint to try for attempt n, among those not in skip
// (among all when every endpoint is in it): healthy endpoints in
// configured order first (rotating with n), then the least failed.
func (c *Client) pick(n int, skip map[*endpoint]bool) *endpoint {
	now := time.Now()
	var up []*endpoint
	var best *endpoint
	bestFailures := 0
	for _, e := range c.endpoints {
		if skip[e] && len(skip) < len(c.endpoints) {
			continue
		}
		e.mu.Lock()
		healthy, failures := !now.Before(e.downUntil), e.failures
		e.mu.Unlock()
		if healthy {
			up = append(up, e)
		}
		if best == nil || failures < bestFailures {
			best, bestFailures = e, failures
		}
	}
	if len(up) > 0 {
		return up[n%len(up)]
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
	a, err := c.call(ctx, method, params, -1)
	return a.Result, err
}

// Answer is the `result` member of a JSON-RPC answer: whole in memory, or,
// for a large answer, as a stream.
type Answer struct {
	// Result is the whole result, when the answer was read into memory.
	Result json.RawMessage
	// Stream, when Result is nil, reads the result of a large answer: its
	// JSON value from the first byte, followed by the rest of the envelope
	// (a JSON decoder of one value stops before it). Its read errors wrap
	// ErrStreamBroken (and io.ErrUnexpectedEOF when the body is cut short
	// of its Content-Length). The caller must Close it; the method's
	// timeout runs until then.
	Stream io.ReadCloser
	// Size is the answer's Content-Length, or -1 when the node sent none.
	Size int64
}

// ErrStreamBroken is wrapped by the read errors of Answer.Stream: the
// answer could not be read to its end (the connection failed, the timeout
// or the context ended, or it exceeded MaxResponseBytes). Reading the
// height again may succeed.
var ErrStreamBroken = errors.New("answer stream broken")

// StreamAbove is the default in-memory limit of CallAnswer's callers (the
// indexer's): answers to ordinary heights are far smaller and keep the
// fast in-memory decode, while an answer above it (decided by its
// Content-Length, or by a first read of up to this many bytes when the
// node sends none) is streamed. Decoded whole with its rows, an answer
// costs about seven times its size at peak (measured: +53 MB of RSS for
// 8 MB, +124 MB for 16 MB), so at 8 MB even four fetch workers at the
// limit at once stay near the indexer's 300 MB budget.
const StreamAbove = 8 << 20

// CallAnswer is Call for answers that may be too large to hold in memory.
// An answer of at most inMemoryMax bytes is read whole into
// Answer.Result, exactly as Call does; a larger one is returned as
// Answer.Stream. The size is the Content-Length when the node sends one;
// otherwise CallAnswer reads up to inMemoryMax+1 bytes first and streams
// only if the body has more. Errors before the result (transport, HTTP
// status, a JSON-RPC error member, read as a stream by a token walk of the
// envelope) are typed and retried as Call's are; once the stream is
// handed over, a failure while reading it is the caller's to retry.
func (c *Client) CallAnswer(ctx context.Context, method string, params map[string]any, inMemoryMax int64) (Answer, error) {
	return c.call(ctx, method, params, max(inMemoryMax, 0))
}

// call is Call (inMemoryMax < 0: never stream) and CallAnswer.
func (c *Client) call(ctx context.Context, method string, params map[string]any, inMemoryMax int64) (Answer, error) {
	timeout := timeouts[method]
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	if c.retry.AttemptTimeout > 0 {
		timeout = min(timeout, c.retry.AttemptTimeout)
	}
	rawParams, err := json.Marshal(params)
	if err != nil {
		return Answer{}, fmt.Errorf("cometbft %s: %w", method, err)
	}
	var lastErr error
	// refused holds the endpoints that refused the height (pruned, or
	// behind): the others are asked at once, and the refusal is the
	// answer only when every endpoint gave it. The height is pruned only
	// when every endpoint pruned it; when one is behind, it may come.
	var refused map[*endpoint]bool
	var behind error
	for attempt := range c.retry.Attempts {
		var he *HeightError
		if attempt > 0 && !errors.As(lastErr, &he) {
			if err := sleep(ctx, backoff(c.retry, attempt)); err != nil {
				return Answer{}, err
			}
		}
		e := c.pick(attempt, refused)
		res, err := c.callOnce(ctx, e, method, rawParams, timeout, inMemoryMax)
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
			return Answer{}, ctx.Err()
		}
		if he := (*HeightError)(nil); errors.As(err, &he) && len(c.endpoints) > 1 {
			if refused == nil {
				refused = map[*endpoint]bool{}
			}
			refused[e] = true
			if he.TooHigh {
				behind = err
			}
			if len(refused) < len(c.endpoints) {
				c.log.Debug("height refused; asking another endpoint", "method", method, "endpoint", e.url, "err", err)
				continue
			}
			if behind != nil {
				err = behind
			}
		}
		if !retryable(err) {
			return Answer{}, fmt.Errorf("cometbft %s: %w", method, err)
		}
		c.log.Debug("rpc call failed; retrying", "method", method, "endpoint", e.url, "attempt", attempt+1, "err", err)
	}
	return Answer{}, fmt.Errorf("cometbft %s: %d attempts failed: %w", method, c.retry.Attempts, lastErr)
}

func (c *Client) callOnce(ctx context.Context, e *endpoint, method string, params json.RawMessage, timeout time.Duration, inMemoryMax int64) (Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	streaming := false
	defer func() {
		if !streaming {
			cancel()
		}
	}()
	id := rpctypes.JSONRPCIntID(c.nextID.Add(1))
	body, err := json.Marshal(rpctypes.NewRPCRequest(id, method, params))
	if err != nil {
		return Answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return Answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("%s: %w", e.url, err)
	}
	defer func() {
		if !streaming {
			resp.Body.Close()
		}
	}()
	size := resp.ContentLength
	// The in-memory lane: Call, error statuses, and answers known to be small.
	if inMemoryMax < 0 || resp.StatusCode != http.StatusOK || (size >= 0 && size <= inMemoryMax) {
		data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
		if err != nil {
			return Answer{}, fmt.Errorf("%s: read body: %w", e.url, err)
		}
		return parseAnswer(e.url, resp.StatusCode, data, size)
	}
	var prefix []byte
	if size < 0 { // no Content-Length: the first bytes tell
		prefix, err = io.ReadAll(io.LimitReader(resp.Body, inMemoryMax+1))
		if err != nil {
			return Answer{}, fmt.Errorf("%s: read body: %w", e.url, err)
		}
		if int64(len(prefix)) <= inMemoryMax {
			return parseAnswer(e.url, resp.StatusCode, prefix, size)
		}
	}
	s := &stream{r: io.MultiReader(bytes.NewReader(prefix), resp.Body), body: resp.Body, cancel: cancel, e: e}
	result, err := openResult(s)
	if err != nil {
		return Answer{}, err
	}
	streaming = true
	return Answer{Stream: result, Size: size}, nil
}

// parseAnswer reads a whole JSON-RPC answer.
// envelope is a JSON-RPC 2.0 answer: its result kept raw for the
// method's decoder, or its error.
type envelope struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    string `json:"data"`
	} `json:"error"`
}

// envelopeJSON reads envelopes (and other large answers, such as a set of 150 validators): sonic's standard-compatible configuration
// skips the result several times faster than encoding/json, which
// validated and then scanned every byte of it again before the method's
// own decoder read it a third time (a third of the indexer's CPU on
// Osmosis-sized blocks).
var envelopeJSON = sonic.ConfigStd

func parseAnswer(url string, status int, data []byte, size int64) (Answer, error) {
	if len(data) > MaxResponseBytes {
		return Answer{}, fmt.Errorf("%s: response larger than %d bytes", url, MaxResponseBytes)
	}
	var r envelope
	if err := envelopeJSON.Unmarshal(data, &r); err != nil {
		return Answer{}, fmt.Errorf("%s: HTTP %d, bad JSON-RPC answer: %w", url, status, err)
	}
	if r.Error != nil {
		return Answer{}, &RPCError{Code: r.Error.Code, Message: r.Error.Message, Data: r.Error.Data}
	}
	if status != http.StatusOK {
		return Answer{}, fmt.Errorf("%s: HTTP %d", url, status)
	}
	if len(r.Result) == 0 || string(r.Result) == "null" {
		return Answer{}, fmt.Errorf("%s: empty result", url)
	}
	return Answer{Result: r.Result, Size: size}, nil
}

// openResult walks the members of a streamed JSON-RPC envelope up to its
// result, and returns the stream from the result's first byte. An error
// member ends the walk as an *RPCError, as in Call.
func openResult(s *stream) (io.ReadCloser, error) {
	fail := func(err error) (io.ReadCloser, error) {
		s.Close()
		return nil, err
	}
	dec := json.NewDecoder(s)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fail(fmt.Errorf("%s: bad JSON-RPC answer: %v %w", s.e.url, tok, err))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(fmt.Errorf("%s: bad JSON-RPC answer: %w", s.e.url, err))
		}
		switch tok {
		case "result":
			br := bufio.NewReaderSize(io.MultiReader(dec.Buffered(), s), 64<<10)
			first, err := skipSpace(br, true)
			if err != nil {
				return fail(fmt.Errorf("%s: bad JSON-RPC answer: %w", s.e.url, err))
			}
			if first == 'n' { // null
				return fail(fmt.Errorf("%s: empty result", s.e.url))
			}
			s.handedOver = true
			return &resultStream{Reader: br, s: s}, nil
		case "error":
			var e *rpctypes.RPCError
			if err := dec.Decode(&e); err != nil {
				return fail(fmt.Errorf("%s: bad JSON-RPC answer: %w", s.e.url, err))
			}
			if e != nil {
				return fail(&RPCError{Code: e.Code, Message: e.Message, Data: e.Data})
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(fmt.Errorf("%s: bad JSON-RPC answer: %w", s.e.url, err))
			}
		}
	}
	return fail(fmt.Errorf("%s: empty result", s.e.url))
}

// skipSpace reads past white space (and, with colon, one ':') and returns
// the next byte, left unread.
func skipSpace(br *bufio.Reader, colon bool) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		switch {
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
		case b == ':' && colon:
			colon = false
		case colon:
			return 0, fmt.Errorf("want ':' after \"result\", got %q", b)
		default:
			return b, br.UnreadByte()
		}
	}
}

// stream is the body of a streamed answer: it counts what it read, turns
// read failures into ErrStreamBroken (recorded against the endpoint), and
// ends the request's timeout on Close.
type stream struct {
	r      io.Reader
	body   io.Closer
	cancel context.CancelFunc
	e      *endpoint
	n      int64
	// handedOver is set once the result stream is returned to the caller.
	handedOver, failed bool
}

func (s *stream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	if err == nil && s.n > MaxResponseBytes {
		err = fmt.Errorf("response larger than %d bytes", MaxResponseBytes)
	}
	if err != nil && err != io.EOF {
		if s.handedOver && !s.failed { // before, the call's retry loop records it
			s.failed = true
			s.e.record(err)
		}
		err = fmt.Errorf("%w: %s: after %d bytes: %w", ErrStreamBroken, s.e.url, s.n, err)
	}
	return n, err
}

func (s *stream) Close() error {
	err := s.body.Close()
	s.cancel()
	return err
}

// resultStream is Answer.Stream.
type resultStream struct {
	io.Reader
	s *stream
}

func (r *resultStream) Close() error { return r.s.Close() }

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
