package api

import (
	"context"
	"net/http"
	"time"

	"github.com/chainlens/chainlens/api/respcache"
	"github.com/chainlens/chainlens/api/route"
)

// lookup finds a cached answer of an analytics operation. A cached answer
// exists only for a URL that parsed and succeeded, so a hit skips
// parameter parsing (credits are still charged).
func (s *Server) lookup(op route.Operation) middleware {
	return func(next http.Handler) http.Handler {
		id := op.ID()
		if _, isJSON := s.opt.Handlers.JSON[id]; !op.Analytics() || !isJSON {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c := callOf(r)
			c.ckey = s.cache.Key(id.String(), r)
			c.cached, c.state = s.cache.Get(c.ckey, time.Now())
			next.ServeHTTP(w, r)
		})
	}
}

// serveCached sends the cached answer the lookup found; a stale one is
// recomputed in the background (once at a time).
func (s *Server) serveCached(op route.Operation) middleware {
	h := s.opt.Handlers.JSON[op.ID()]
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c := callOf(r)
			if c.cached == nil {
				next.ServeHTTP(w, r)
				return
			}
			s.metrics.cacheResult(c.state)
			if c.state == respcache.Stale && c.cached.Refreshing.CompareAndSwap(false, true) {
				s.refresh(c.cached, op, h, c.ckey, r.Clone(context.WithoutCancel(r.Context())), c.key)
			}
			writeEncoded(w, r, c.cached)
		})
	}
}
