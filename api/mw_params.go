package api

import (
	"net/http"

	"github.com/chainlens/chainlens/api/params"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
)

// parse reads the operation's typed parameters into the call (400 naming
// the parameter otherwise), unless a cached answer was found.
func (s *Server) parse(op route.Operation) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c := callOf(r)
			if c.cached == nil {
				v, err := params.Parse(op, r)
				if err != nil {
					s.writeError(w, r, err)
					return
				}
				c.vals = v
			}
			next.ServeHTTP(w, r)
		})
	}
}

// implemented answers 501 for an operation without a handler (its
// parameters are checked first, so a bad request is still a 400).
func (s *Server) implemented(op route.Operation) middleware {
	return func(next http.Handler) http.Handler {
		if s.opt.Handlers.implemented(op.ID()) {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.writeError(w, r, problem.Status(http.StatusNotImplemented, "%s %s (%s group) is not implemented yet", op.Method, op.Path, op.Group))
		})
	}
}
