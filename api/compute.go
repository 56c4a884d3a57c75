package api

import (
	"context"
	"net/http"

	"github.com/chainlens/chainlens/api/respcache"
	"github.com/chainlens/chainlens/api/route"
)

// compute answers a call no earlier step answered: a raw handler writes
// its own answer; a JSON one is computed (an analytics answer in one
// snapshot, shared by identical requests and kept when the cache is on)
// and sent.
func (s *Server) compute(op route.Operation) http.Handler {
	jsonH, isJSON := s.opt.Handlers.JSON[op.ID()]
	rawH := s.opt.Handlers.Raw[op.ID()]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callOf(r)
		if isJSON && c.ckey != "" && s.cache.Enabled() {
			s.metrics.cacheResult(c.state)
			// Identical requests that miss the cache together share one
			// computation (a popular URL expiring under load is computed
			// once, not once per waiting request). It runs detached from any
			// one client's cancellation, bounded by the handler timeout.
			v, err, _ := s.flight.Do(c.ckey, func() (any, error) {
				return s.computeCached(op, jsonH, c.ckey, c.vals, r, c.key)
			})
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			writeEncoded(w, r, v.(*respcache.Entry))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.opt.Config.Timeouts.Handler.D())
		defer cancel()
		req := &Request{Op: op, Params: c.vals, HTTP: r.WithContext(ctx), Key: c.key, Now: s.opt.Now().UTC(), ClientIP: s.clientIP(r)}
		if !isJSON {
			if err := rawH(w, req); err != nil {
				s.writeError(w, r, err)
			}
			return
		}
		resp, err := s.answer(ctx, op, jsonH, req)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		// An answer sent once is compressed only for a client that takes gzip.
		e, err := encode(op, resp, acceptsGzip(r))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeEncoded(w, r, e)
	})
}
