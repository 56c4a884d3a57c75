package api

import (
	"context"
	"net/http"

	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
)

// originChecker is implemented by authenticators that can tell whether a
// publishable key allows an origin (apikey.Authenticator does).
type originChecker interface {
	OriginAllowed(ctx context.Context, origin string) (bool, error)
}

// allowOrigin lets a page read the answer of a publishable operation (its
// errors included: a 429's Retry-After, a 401) when its Origin is allowed
// by a live publishable key.
func (s *Server) allowOrigin(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	oc, ok := s.opt.Auth.(originChecker)
	if origin == "" || !ok {
		return
	}
	if allowed, err := oc.OriginAllowed(r.Context(), origin); err != nil || !allowed {
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", "Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Request-Id")
}

// preflight answers CORS preflight requests of publishable operations:
// 204 with the CORS headers for an origin some live publishable key allows,
// 403 otherwise.
func (s *Server) preflight(op route.Operation) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		oc, ok := s.opt.Auth.(originChecker)
		if origin == "" || !ok {
			s.writeError(w, r, problem.Status(http.StatusForbidden, "CORS preflight needs an Origin allowed by a publishable key"))
			return
		}
		allowed, err := oc.OriginAllowed(r.Context(), origin)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if !allowed {
			s.writeError(w, r, problem.Status(http.StatusForbidden, "origin %s is not allowed by any publishable key", origin))
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", op.Method+", OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
		h.Set("Access-Control-Max-Age", "86400")
		h.Add("Vary", "Origin")
		w.WriteHeader(http.StatusNoContent)
	})
}

// cors lets a page read the answers of a publishable operation whose
// Origin a live publishable key allows (auth narrows it to the caller's).
func (s *Server) cors(op route.Operation) middleware {
	return func(next http.Handler) http.Handler {
		if !op.Publishable {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.allowOrigin(w, r)
			next.ServeHTTP(w, r)
		})
	}
}
