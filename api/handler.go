// Package api serves every endpoint group from the route table: it
// registers one handler per operation, and wraps each in the shared
// middleware (request id, recovery, metrics, auth, credits, parameters,
// freshness, caching). An operation whose group is not built yet answers
// 501 problem+json.
package api

import (
	"context"
	"net/http"
	"time"

	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/params"
	"github.com/chainlens/chainlens/api/route"
)

// Request is what a handler gets: the operation, its parsed parameters and
// the HTTP request.
type Request struct {
	Op     route.Operation
	Params params.Values
	HTTP   *http.Request
	Key    *apikey.Key // nil for public groups and keyless operations
	Now    time.Time
	// ClientIP is the client's address (see api.trusted_proxies).
	ClientIP string
}

// Response is a handler's answer: the JSON body and how fresh its data is.
type Response struct {
	Body      any
	Freshness Freshness
	// MaxAge is how long clients may cache the answer; 0 = the server default.
	MaxAge time.Duration
}

// Freshness is the last indexed block of each chain an answer draws on.
type Freshness struct {
	Chains []ChainHeight
}

// ChainHeight is one chain's last indexed height and its block time.
type ChainHeight struct {
	ChainID string
	Height  int64
	Time    time.Time
	// First is the time of the first indexed block (zero when unknown):
	// the series of the chain start at its bucket, as nothing is known of
	// the time before.
	First time.Time
}

// Handler computes the JSON answer of an analytics or engagement operation.
type Handler func(ctx context.Context, req *Request) (*Response, error)

// RawHandler writes its own answer (redirects, CORS, durable writes); it
// returns an error to have it answered as problem+json instead.
type RawHandler func(w http.ResponseWriter, req *Request) error

// AdminHandler serves one admin API route; it returns an error to have it
// answered as problem+json.
type AdminHandler func(w http.ResponseWriter, r *http.Request) error

// Handlers binds operations (by route.Operation.ID) to their handlers.
type Handlers struct {
	JSON map[route.ID]Handler
	Raw  map[route.ID]RawHandler
	// Admin are the admin API routes by pattern ("GET /admin/campaigns"),
	// served under the engagement base address to secret keys with the
	// admin scope. They are not operations of the interface.
	Admin map[route.ID]AdminHandler
}

// implemented reports whether an operation has a handler.
func (h Handlers) implemented(id route.ID) bool {
	_, ok := h.JSON[id]
	_, ok2 := h.Raw[id]
	_, ok3 := h.Admin[id]
	return ok || ok2 || ok3
}
