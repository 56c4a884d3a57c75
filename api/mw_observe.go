package api

import (
	"net/http"
	"time"

	"github.com/chainlens/chainlens/api/route"
)

// observe records each request's latency and status by operation, and
// starts its call.
func (s *Server) observe(op route.Operation) middleware {
	id := op.ID()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := &statusWriter{ResponseWriter: w}
			defer func() { s.metrics.observe(id, sw.status, time.Since(start)) }()
			next.ServeHTTP(sw, withCall(r, &call{}))
		})
	}
}
