package cometbft

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Status is what the indexer reads from /status.
type Status struct {
	Network        string // chain id
	Version        string // CometBFT version of the node
	LatestHeight   int64
	LatestTime     time.Time
	EarliestHeight int64
	CatchingUp     bool
}

// Base64Attributes reports whether the node's block_results encode event
// attributes in base64 (CometBFT 0.34).
func (s Status) Base64Attributes() bool { return strings.HasPrefix(s.Version, "0.34.") }

// Status returns the node's tip and earliest available height. With
// several endpoints it asks each of them once, in parallel, and answers
// for all of them together: the highest tip and the lowest earliest height
// (a height one endpoint lacks is asked of the others, see Client.call);
// when none answers, it falls back to a retried call.
func (c *Client) Status(ctx context.Context) (Status, error) {
	if len(c.endpoints) > 1 {
		if st, ok, err := c.statusOfAll(ctx); ok || err != nil {
			return st, err
		}
	}
	raw, err := c.Call(ctx, "status", map[string]any{})
	if err != nil {
		return Status{}, err
	}
	return parseStatus(raw)
}

// ErrMixedChains means the configured endpoints serve different chains: a
// configuration error, not an outage.
var ErrMixedChains = errors.New("the endpoints serve different chains")

// statusOfAll asks every endpoint for its status once; ok is false when
// none answered. Endpoints serving different chains are an error.
func (c *Client) statusOfAll(ctx context.Context) (Status, bool, error) {
	timeout := timeouts["status"]
	if c.retry.AttemptTimeout > 0 {
		timeout = min(timeout, c.retry.AttemptTimeout)
	}
	sts := make([]*Status, len(c.endpoints))
	var wg sync.WaitGroup
	for i, e := range c.endpoints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := c.callOnce(ctx, e, "status", json.RawMessage(`{}`), timeout, -1)
			var re *RPCError
			switch {
			case ctx.Err() != nil:
				return // shutting down: not the endpoint's failure
			case errors.As(err, &re):
				e.record(nil) // the node answered; it is healthy
				return
			case err == nil:
				var st Status
				if st, err = parseStatus(a.Result); err == nil {
					sts[i] = &st
				}
			}
			e.record(err)
		}()
	}
	wg.Wait()
	var all *Status
	for i, st := range sts {
		switch {
		case st == nil:
		case all == nil:
			all = st
		case st.Network != all.Network:
			return Status{}, false, fmt.Errorf("cometbft status: %w: %s serves %q, another %q", ErrMixedChains, c.endpoints[i].url, st.Network, all.Network)
		default:
			if st.LatestHeight > all.LatestHeight {
				all.LatestHeight, all.LatestTime, all.CatchingUp = st.LatestHeight, st.LatestTime, st.CatchingUp
			}
			all.EarliestHeight = min(all.EarliestHeight, st.EarliestHeight)
		}
	}
	if all == nil {
		return Status{}, false, nil
	}
	return *all, true, nil
}

// parseStatus reads the result of /status.
func parseStatus(raw json.RawMessage) (Status, error) {
	var err error
	var r struct {
		NodeInfo struct {
			Network string `json:"network"`
			Version string `json:"version"`
		} `json:"node_info"`
		SyncInfo struct {
			LatestHeight   string    `json:"latest_block_height"`
			LatestTime     time.Time `json:"latest_block_time"`
			EarliestHeight string    `json:"earliest_block_height"`
			CatchingUp     bool      `json:"catching_up"`
		} `json:"sync_info"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Status{}, fmt.Errorf("cometbft status: %w", err)
	}
	s := Status{Network: r.NodeInfo.Network, Version: r.NodeInfo.Version, LatestTime: r.SyncInfo.LatestTime, CatchingUp: r.SyncInfo.CatchingUp}
	if s.LatestHeight, err = strconv.ParseInt(r.SyncInfo.LatestHeight, 10, 64); err != nil {
		return Status{}, fmt.Errorf("cometbft status: latest_block_height %q: %w", r.SyncInfo.LatestHeight, err)
	}
	if s.EarliestHeight, err = strconv.ParseInt(r.SyncInfo.EarliestHeight, 10, 64); err != nil || s.EarliestHeight < 1 {
		s.EarliestHeight = 1
	}
	return s, nil
}

// Block returns the `result` of /block at height.
func (c *Client) Block(ctx context.Context, height int64) (json.RawMessage, error) {
	return c.Call(ctx, "block", map[string]any{"height": strconv.FormatInt(height, 10)})
}

// BlockResults returns the `result` of /block_results at height.
func (c *Client) BlockResults(ctx context.Context, height int64) (json.RawMessage, error) {
	return c.Call(ctx, "block_results", map[string]any{"height": strconv.FormatInt(height, 10)})
}

// BlockResultsAnswer returns the `result` of /block_results at height:
// whole when the answer is at most inMemoryMax bytes, else as a stream
// (see CallAnswer).
func (c *Client) BlockResultsAnswer(ctx context.Context, height, inMemoryMax int64) (Answer, error) {
	return c.CallAnswer(ctx, "block_results", map[string]any{"height": strconv.FormatInt(height, 10)}, inMemoryMax)
}

// BlockResultsStream returns the `result` of /block_results at height as a
// stream, whatever its size (see Answer.Stream); the caller closes it.
func (c *Client) BlockResultsStream(ctx context.Context, height int64) (io.ReadCloser, error) {
	a, err := c.BlockResultsAnswer(ctx, height, 0)
	if err != nil {
		return nil, err
	}
	if a.Stream == nil { // an empty body's worth: nothing to stream
		return io.NopCloser(bytes.NewReader(a.Result)), nil
	}
	return a.Stream, nil
}

// ABCIQuery runs a query at a fixed height and returns the response value bytes.
func (c *Client) ABCIQuery(ctx context.Context, path string, data []byte, height int64) ([]byte, error) {
	raw, err := c.Call(ctx, "abci_query", map[string]any{
		"path": path, "data": fmt.Sprintf("%X", data), "height": strconv.FormatInt(height, 10), "prove": false,
	})
	if err != nil {
		return nil, err
	}
	var r struct {
		Response struct {
			Code  uint32 `json:"code"`
			Log   string `json:"log"`
			Value []byte `json:"value"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("cometbft abci_query %s: %w", path, err)
	}
	if r.Response.Code != 0 {
		return nil, &QueryRefused{Path: path, Height: height, Code: r.Response.Code, Log: r.Response.Log}
	}
	// A cosmos-sdk store read (/store/...) of a version the node does not
	// keep answers code 0, no value and this log: not an absent key.
	if len(r.Response.Value) == 0 && strings.Contains(r.Response.Log, "version does not exist") {
		return nil, fmt.Errorf("cometbft abci_query %s at %d: %s", path, height, r.Response.Log)
	}
	return r.Response.Value, nil
}

// QueryRefused is an abci_query the application answered with an error
// code: the node is up and said no (an unknown path, a pruned height, a
// request its module rejects).
type QueryRefused struct {
	Path   string
	Height int64
	Code   uint32
	Log    string
}

func (e *QueryRefused) Error() string {
	return fmt.Sprintf("cometbft abci_query %s at %d: code %d: %s", e.Path, e.Height, e.Code, e.Log)
}

// Genesis returns the node's genesis document (the `genesis` member of
// /genesis). A node whose genesis is too large for /genesis refuses it and
// serves it in chunks: then the chunks of /genesis_chunked are joined.
func (c *Client) Genesis(ctx context.Context) (json.RawMessage, error) {
	raw, err := c.Call(ctx, "genesis", map[string]any{})
	var re *RPCError
	if errors.As(err, &re) && strings.Contains(re.Message+" "+re.Data, "genesis_chunked") {
		return c.genesisChunked(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("cometbft genesis: %w", err)
	}
	var r struct {
		Genesis json.RawMessage `json:"genesis"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Genesis) == 0 {
		return nil, fmt.Errorf("cometbft genesis: no genesis document in the answer (%v)", err)
	}
	return r.Genesis, nil
}

// genesisChunked joins every chunk of /genesis_chunked (base64 parts of the
// genesis document's JSON).
func (c *Client) genesisChunked(ctx context.Context) (json.RawMessage, error) {
	var doc []byte
	for i, total := 0, 1; i < total; i++ {
		raw, err := c.Call(ctx, "genesis_chunked", map[string]any{"chunk": strconv.Itoa(i)})
		if err != nil {
			return nil, fmt.Errorf("cometbft genesis chunk %d: %w", i, err)
		}
		var r struct {
			Total string `json:"total"`
			Data  []byte `json:"data"` // base64 in the JSON
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("cometbft genesis chunk %d: %w", i, err)
		}
		if total, err = strconv.Atoi(r.Total); err != nil || total < 1 {
			return nil, fmt.Errorf("cometbft genesis chunk %d: total %q", i, r.Total)
		}
		doc = append(doc, r.Data...)
	}
	if !json.Valid(doc) {
		return nil, errors.New("cometbft genesis: the joined chunks are not a JSON document")
	}
	return doc, nil
}

// ABCIInfo is what /abci_info says of the application.
type ABCIInfo struct {
	// Version is the application's version string (e.g. the chain
	// binary's release, "v25.0.0"); it changes with an upgrade.
	Version         string
	LastBlockHeight int64
}

// ABCIInfo returns the application's version and last committed height.
func (c *Client) ABCIInfo(ctx context.Context) (ABCIInfo, error) {
	raw, err := c.Call(ctx, "abci_info", map[string]any{})
	if err != nil {
		return ABCIInfo{}, fmt.Errorf("cometbft abci_info: %w", err)
	}
	var r struct {
		Response struct {
			Version         string `json:"version"`
			LastBlockHeight string `json:"last_block_height"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return ABCIInfo{}, fmt.Errorf("cometbft abci_info: %w", err)
	}
	info := ABCIInfo{Version: r.Response.Version}
	if r.Response.LastBlockHeight != "" {
		if info.LastBlockHeight, err = strconv.ParseInt(r.Response.LastBlockHeight, 10, 64); err != nil {
			return ABCIInfo{}, fmt.Errorf("cometbft abci_info: last_block_height %q: %w", r.Response.LastBlockHeight, err)
		}
	}
	return info, nil
}

// Validator is one member of a validator set.
type Validator struct {
	Address string // upper-case hex consensus address
	Power   int64
}

// validatorsPerPage is the largest page CometBFT serves.
const validatorsPerPage = 100

// Validators returns the validator set at height, in the set's order (the
// order of a commit's signatures), reading every page.
func (c *Client) Validators(ctx context.Context, height int64) ([]Validator, error) {
	var out []Validator
	for page := 1; ; page++ {
		raw, err := c.Call(ctx, "validators", map[string]any{"height": strconv.FormatInt(height, 10),
			"page": strconv.Itoa(page), "per_page": strconv.Itoa(validatorsPerPage)})
		if err != nil {
			return nil, fmt.Errorf("cometbft validators at %d: %w", height, err)
		}
		var r struct {
			Validators []struct {
				Address     string `json:"address"`
				VotingPower string `json:"voting_power"`
			} `json:"validators"`
			Total string `json:"total"`
		}
		if err := envelopeJSON.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("cometbft validators at %d: %w", height, err)
		}
		for _, v := range r.Validators {
			p, err := strconv.ParseInt(v.VotingPower, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("cometbft validators at %d: voting_power %q: %w", height, v.VotingPower, err)
			}
			out = append(out, Validator{Address: strings.ToUpper(v.Address), Power: p})
		}
		total, err := strconv.Atoi(r.Total)
		if err != nil {
			return nil, fmt.Errorf("cometbft validators at %d: total %q: %w", height, r.Total, err)
		}
		if len(out) >= total || len(r.Validators) == 0 {
			return out, nil
		}
	}
}
