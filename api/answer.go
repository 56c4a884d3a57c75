package api

import (
	"context"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/params"
	"github.com/chainlens/chainlens/api/respcache"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/store/reads"
)

// computeCached runs an analytics handler detached from the client's
// cancellation (bounded by the handler timeout), encodes its answer and
// keeps it in the response cache.
func (s *Server) computeCached(op route.Operation, h Handler, ckey string, vals params.Values, r *http.Request, key *apikey.Key) (*respcache.Entry, error) {
	started, seq := time.Now(), s.cache.Seq()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.opt.Config.Timeouts.Handler.D())
	defer cancel()
	req := &Request{Op: op, Params: vals, HTTP: r.WithContext(ctx), Key: key, Now: s.opt.Now().UTC(), ClientIP: s.clientIP(r)}
	resp, replayed, err := s.answerAt(ctx, op, h, req)
	if err != nil {
		return nil, err
	}
	e, err := encode(op, resp, true)
	if err != nil {
		return nil, err
	}
	if replayed != reads.Current {
		seq = s.cache.SeqReplayed(seq, replayed)
	}
	s.cache.Put(ckey, e, started, seq)
	return e, nil
}

// answer runs a JSON handler: an analytics answer inside one read-only
// snapshot of the database, an engagement answer as it is.
func (s *Server) answer(ctx context.Context, op route.Operation, h Handler, req *Request) (*Response, error) {
	resp, _, err := s.answerAt(ctx, op, h, req)
	return resp, err
}

// answerAt is answer, also saying how far the snapshot had replayed the
// primary's WAL (reads.Current: it shows every earlier commit).
func (s *Server) answerAt(ctx context.Context, op route.Operation, h Handler, req *Request) (*Response, int64, error) {
	if !op.Analytics() {
		resp, err := h(ctx, req)
		return resp, reads.Current, err
	}
	return inSnapshot(ctx, s.opt.Reads, s.opt.DB, func(ctx context.Context) (*Response, error) { return h(ctx, req) })
}

// refresh recomputes the stale cached answer e in the background (r is a
// clone of the request that found it stale). Recomputations take turns on
// a few slots, so a change announced for many cached answers at once cannot
// crowd out the requests being served (the stale answers are sent
// meanwhile); one whose answer was recomputed while it waited (a miss, or
// an earlier refresh) does nothing. At most one waits per kept answer (its
// refreshing flag). A failure or a panic keeps the stale answer until it
// ages out, and is logged.
func (s *Server) refresh(e *respcache.Entry, op route.Operation, h Handler, ckey string, r *http.Request, key *apikey.Key) {
	go func() {
		s.refreshSlots <- struct{}{}
		defer func() { <-s.refreshSlots }()
		defer func() {
			if p := recover(); p != nil {
				s.opt.Log.Error("panic while refreshing a cached answer", "operation", op.ID(), "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				e.Refreshing.Store(false)
			}
		}()
		// Recomputed meanwhile (a miss, or an earlier refresh)? Nothing to do.
		if cur, state := s.cache.Get(ckey, time.Now()); cur != e || state != respcache.Stale {
			return
		}
		vals, err := params.Parse(op, r)
		if err == nil {
			_, err, _ = s.flight.Do(ckey, func() (any, error) {
				return s.computeCached(op, h, ckey, vals, r, key)
			})
		}
		if err != nil {
			s.opt.Log.Warn("refreshing a cached answer", "operation", op.ID(), "path", r.URL.Path, "err", err)
			e.Refreshing.Store(false)
		}
	}()
}
