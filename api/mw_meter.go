package api

import (
	"net/http"
	"strconv"

	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
)

// meter charges the call's key the operation's credits under its rate
// limit (429 with Retry-After otherwise) and gives them back when the
// answer is a server error.
func (s *Server) meter(op route.Operation) middleware {
	cost := int64(op.Credits)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := callOf(r).key
			if key == nil {
				next.ServeHTTP(w, r)
				return
			}
			d := s.opt.Meter.Allow(key, cost)
			h := w.Header()
			// Canonical names assigned directly: no canonicalisation per request.
			h["X-Ratelimit-Limit"] = []string{strconv.FormatInt(d.Limit, 10)}
			h["X-Ratelimit-Remaining"] = []string{strconv.FormatInt(d.Remaining, 10)}
			h["X-Ratelimit-Reset"] = []string{strconv.FormatInt(d.Reset.Unix(), 10)}
			if !d.Allowed {
				s.writeError(w, r, &problem.Error{Status: http.StatusTooManyRequests, Detail: d.Reason, RetryAfter: d.RetryAfter})
				return
			}
			sw, _ := w.(*statusWriter)
			defer func() {
				if sw != nil && sw.status >= 500 {
					s.opt.Meter.Refund(key, cost)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}
