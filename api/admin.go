package api

import (
	"errors"
	"net/http"

	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/problem"
)

// maxAdminBody bounds admin request bodies (a campaigns import file).
const maxAdminBody = 16 << 20

// admin authenticates an admin API request: a secret key with the admin
// scope. Answers are never cached.
func (s *Server) admin(h AdminHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, ok := bearer(r)
		if !ok {
			s.writeError(w, r, problem.Status(http.StatusUnauthorized, "an API key is required: Authorization: Bearer <key>"))
			return
		}
		k, err := s.opt.Auth.Authenticate(r.Context(), raw)
		if errors.Is(err, apikey.ErrUnknownKey) {
			s.writeError(w, r, problem.Status(http.StatusUnauthorized, "the API key is unknown or revoked"))
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if k.Kind != apikey.Secret || !k.Allows(apikey.ScopeAdmin) {
			s.writeError(w, r, problem.Status(http.StatusForbidden, "the admin API needs a secret key with the admin scope"))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxAdminBody)
		w.Header().Set("Cache-Control", "no-store")
		if err := h(w, r); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				err = problem.Status(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", maxAdminBody)
			}
			s.writeError(w, r, err)
		}
	})
}
