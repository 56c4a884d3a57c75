package api

import (
	"context"
	"net/http"

	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/params"
	"github.com/chainlens/chainlens/api/respcache"
	"github.com/chainlens/chainlens/api/route"
)

// middleware wraps the handling of one operation's requests.
type middleware func(http.Handler) http.Handler

// operation is the handling of one operation: its middlewares, in order,
// around the answer. Each step may answer (an error, a cached answer) and
// stop; what a step learns for the later ones is kept in the call.
func (s *Server) operation(op route.Operation, public bool) http.Handler {
	chain := []middleware{
		s.observe(op),      // latency and status metrics; starts the call
		s.cors(op),         // CORS headers of publishable operations
		s.auth(op, public), // the API key, its scope, its origins
		s.limitBody,        // 413 past MaxBodyBytes
		s.lookup(op),       // the response cache
		s.parse(op),        // typed parameters (400), unless cached
		s.implemented(op),  // 501 for an operation without a handler
		s.meter(op),        // rate limit and credits (429), refunded on 5xx
		s.serveCached(op),  // a cached answer, refreshed when stale
	}
	h := s.compute(op)
	for i := len(chain) - 1; i >= 0; i-- {
		h = chain[i](h)
	}
	return h
}

// call is what the steps of one request learn, for the later ones.
type call struct {
	id     string      // the request id (X-Request-Id)
	key    *apikey.Key // nil for public groups and keyless operations
	vals   params.Values
	ckey   string           // response cache key; "" when not cacheable
	cached *respcache.Entry // a usable cached answer
	state  respcache.State
}

type callKey struct{}

// callOf is the call of a request the observe step started.
func callOf(r *http.Request) *call {
	c, _ := r.Context().Value(callKey{}).(*call)
	if c == nil {
		c = &call{} // a step tested alone
	}
	return c
}

// withCall returns r carrying c.
func withCall(r *http.Request, c *call) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), callKey{}, c))
}
