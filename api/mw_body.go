package api

import (
	"net/http"

	"github.com/chainlens/chainlens/api/problem"
)

// limitBody answers 413 for a body declared larger than MaxBodyBytes and
// stops reading a chunked one there (the engagement event limit).
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			s.writeError(w, r, problem.Status(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", MaxBodyBytes))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes) // a chunked body has no length to check first
		}
		next.ServeHTTP(w, r)
	})
}
