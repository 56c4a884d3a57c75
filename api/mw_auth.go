package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
)

// authenticate checks the bearer key, its scope, and for publishable keys
// the operation and the origin.
func (s *Server) authenticate(r *http.Request, op route.Operation) (*apikey.Key, error) {
	raw, ok := bearer(r)
	if !ok {
		return nil, problem.Status(http.StatusUnauthorized, "an API key is required: Authorization: Bearer <key>")
	}
	k, err := s.opt.Auth.Authenticate(r.Context(), raw)
	if errors.Is(err, apikey.ErrUnknownKey) {
		return nil, problem.Status(http.StatusUnauthorized, "the API key is unknown or revoked")
	}
	if err != nil {
		return nil, err
	}
	if !k.Allows(string(op.Group)) {
		return nil, problem.Status(http.StatusForbidden, "this key is not allowed for the %s group", op.Group)
	}
	if k.Kind == apikey.Publishable {
		if !op.Publishable {
			return nil, problem.Status(http.StatusForbidden, "a publishable key may only call /sdk/track and /campaign")
		}
		if origin := r.Header.Get("Origin"); origin != "" && !k.AllowsOrigin(origin) {
			return nil, problem.Status(http.StatusForbidden, "origin %s is not allowed for this key", origin)
		}
	}
	return k, nil
}

// bearer returns the key of an "Authorization: Bearer <key>" header; the
// scheme is case-insensitive (RFC 9110 §11.1).
func bearer(r *http.Request) (string, bool) {
	scheme, key, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return "", false
	}
	return key, true
}

// auth requires an API key allowed for the operation (unless it needs
// none or its group is public) and keeps it in the call.
func (s *Server) auth(op route.Operation, public bool) middleware {
	return func(next http.Handler) http.Handler {
		if op.NoAuth || public {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k, err := s.authenticate(r, op)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			callOf(r).key = k
			// The answer is readable by the page only when the caller's own
			// key allows its origin (a secret key's never is).
			if origin := r.Header.Get("Origin"); op.Publishable && origin != "" &&
				(k.Kind != apikey.Publishable || !k.AllowsOrigin(origin)) {
				w.Header().Del("Access-Control-Allow-Origin")
				w.Header().Del("Access-Control-Expose-Headers")
			}
			next.ServeHTTP(w, r)
		})
	}
}
