package api

import (
	"net/http"
	"time"

	"github.com/chainlens/chainlens/api/route"
)

// observe records each request's latency and status by operation, and
// starts its call.
func (s *Server) observe(op route.Operation) middleware {
	m := s.metrics.forOperation(string(op.Group), op.ID().String())
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := &statusWriter{ResponseWriter: w}
			defer func() { m.observe(sw.status, time.Since(start)) }()
			if r.Context().Value(callKey{}) == nil {
				r = withCall(r, &call{}) // not behind base (a handler tested alone)
			}
			next.ServeHTTP(sw, r)
		})
	}
}
