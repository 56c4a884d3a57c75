// Package engagement serves the engagement group over HTTP (campaigns for a
// wallet, click redirects, /track and /sdk/track) and the admin API. The
// domain it serves (rules, goals, selection, clicks, the durable tracking
// queue, campaign files) is the top-level engagement package, which knows
// nothing of HTTP; here requests are parsed and errors become statuses.
package engagement

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	eng "github.com/chainlens/chainlens/engagement"
)

const (
	queueRetryAfter  = time.Second // Retry-After of a 503 for a full queue or a slow commit
	maxAddressLength = 128
)

// Service serves the engagement group.
type Service struct {
	Selector *eng.Selector
	Clicks   *eng.Clicks
	Recorder *eng.Recorder
	log      *slog.Logger
}

// NewService wires the engagement group over db; the campaign selection,
// which keeps a prepared statement on its connections, runs on session (a
// direct connection when db goes through a transaction-mode pooler).
func NewService(db, session *bun.DB, opt eng.RecorderOptions) *Service {
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{Selector: eng.NewSelector(session), Clicks: eng.NewClicks(db), Recorder: eng.NewRecorder(db, opt), log: log}
}

// Register adds the five engagement handlers to h.
func (s *Service) Register(h api.Handlers) {
	h.JSON[route.EngagementCampaign] = s.campaign
	h.JSON[route.EngagementCampaignMulti] = s.campaignMulti
	h.Raw[route.EngagementClick] = s.click
	h.Raw[route.EngagementTrack] = s.track
	h.Raw[route.EngagementSDKTrack] = s.sdkTrack
}

func keyID(req *api.Request) int64 {
	if req.Key == nil {
		return 0
	}
	return req.Key.ID
}

// selectCampaign runs q and maps selection errors to statuses.
func (s *Service) selectCampaign(ctx context.Context, q eng.Query, now time.Time) (*api.Response, error) {
	out, err := s.Selector.Select(ctx, q, now)
	if errors.Is(err, eng.ErrUnknownPosition) {
		return nil, problem.BadParam("position_id", "is not a configured placement")
	}
	if err != nil {
		return nil, err
	}
	return &api.Response{Body: out}, nil
}

// campaign serves GET /campaign/{address}.
func (s *Service) campaign(ctx context.Context, req *api.Request) (*api.Response, error) {
	addr := req.Params.String("address")
	if addr != eng.Global {
		if _, err := eng.Normalize(addr); err != nil || len(addr) > maxAddressLength {
			return nil, problem.BadParam("address", "must be a bech32 address, a 0x address or global")
		}
	}
	return s.selectCampaign(ctx, eng.Query{PositionID: req.Params.String("position_id"), Addresses: []string{addr}, KeyID: keyID(req)}, req.Now)
}

// campaignMulti serves GET /campaign/multiple-cointype.
func (s *Service) campaignMulti(ctx context.Context, req *api.Request) (*api.Response, error) {
	var addrs []string
	for _, a := range req.Params.Strings("addresses") {
		if a == eng.Global {
			continue
		}
		if _, err := eng.Normalize(a); err != nil || len(a) > maxAddressLength {
			return nil, problem.BadParam("addresses", "\""+eng.Clip(a, 80)+"\" is not a bech32 or 0x address")
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		addrs = []string{eng.Global}
	}
	return s.selectCampaign(ctx, eng.Query{PositionID: req.Params.String("position_id"), Addresses: addrs, KeyID: keyID(req)}, req.Now)
}

// click serves GET /click (and HEAD): 302 to the stored creative url with
// click_id appended. HEAD requests and link-preview bots are redirected
// without a click being recorded (and without a click_id).
func (s *Service) click(w http.ResponseWriter, req *api.Request) error {
	r := req.HTTP
	cid, err := strconv.ParseInt(req.Params.String("campaign_id"), 10, 64)
	if err != nil || cid <= 0 {
		return problem.BadParam("campaign_id", "must be a positive integer")
	}
	aid, err := strconv.ParseInt(req.Params.String("audience_id"), 10, 64)
	if err != nil || aid <= 0 {
		return problem.BadParam("audience_id", "must be a positive integer")
	}
	address := req.Params.String("address")
	if len(address) > maxAddressLength {
		return problem.BadParam("address", "is too long")
	}
	ip := req.ClientIP
	target := req.Params.String("url")
	location, err := s.Clicks.Redirect(r.Context(), eng.ClickRequest{
		CampaignID: cid, AudienceID: aid, PositionID: req.Params.String("position_id"), Address: address, URL: target,
		IP: ip, UserAgent: r.UserAgent(), Referrer: r.Referer(),
		Record: r.Method != http.MethodHead && !eng.IsPreviewBot(r.UserAgent()),
	}, req.Now)
	switch {
	case errors.Is(err, eng.ErrNotFound):
		return problem.Status(http.StatusNotFound, "campaign %d does not exist", cid)
	case errors.Is(err, eng.ErrURLNotStored):
		return problem.BadParam("url", "is not a creative url of this campaign")
	case errors.Is(err, eng.ErrPositionNotFound):
		return problem.BadParam("position_id", "has no creative of this campaign")
	case errors.Is(err, eng.ErrAudienceNotFound):
		return problem.BadParam("audience_id", "is not an audience of this campaign")
	case err != nil:
		return err
	}
	h := w.Header()
	h.Set("Location", location)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusFound)
	return nil
}

// readBody reads a request body within the server's limit, checking its
// media type against the allowed ones.
func readBody(r *http.Request, allowed ...string) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	ok := false
	for _, a := range allowed {
		ok = ok || (err == nil && mt == a)
	}
	if !ok {
		return nil, problem.Status(http.StatusUnsupportedMediaType, "Content-Type must be %s", strings.Join(allowed, " or "))
	}
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, problem.Status(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", tooBig.Limit)
	}
	if err != nil {
		return nil, problem.Status(http.StatusBadRequest, "the body could not be read")
	}
	return body, nil
}

// record validates a decoded event's outcome and stores it, answering
// 200 {"ok": true, "id": ..., "warnings": [...]} after the commit
// (warnings: the reserved members ignored for their type, when any).
func (s *Service) record(w http.ResponseWriter, req *api.Request, ev *eng.Event, err error) error {
	var fe *eng.FieldError
	if errors.As(err, &fe) {
		return problem.BadParam(fe.Field, fe.Reason)
	}
	if err != nil {
		return err
	}
	ev.KeyID = keyID(req)
	id, err := s.Recorder.Record(req.HTTP.Context(), ev)
	switch {
	case errors.Is(err, eng.ErrQueueFull):
		return problem.Unavailable("too many events in flight; retry shortly", queueRetryAfter, nil)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return problem.Unavailable("the event was not confirmed in time; retry (duplicates are answered with the first id)", queueRetryAfter, err)
	case err != nil:
		return problem.Unavailable("the event could not be stored; retry", queueRetryAfter, err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	return json.NewEncoder(w).Encode(struct {
		OK       bool     `json:"ok"`
		ID       string   `json:"id"`
		Warnings []string `json:"warnings,omitempty"`
	}{true, id, ev.Warnings})
}

// track serves POST /track.
func (s *Service) track(w http.ResponseWriter, req *api.Request) error {
	body, err := readBody(req.HTTP, "application/json")
	if err != nil {
		return err
	}
	ev, err := eng.DecodeTrack(body, req.Now)
	return s.record(w, req, ev, err)
}

// sdkTrack serves POST /sdk/track: a text/plain (or JSON) body from the
// browser SDK (the api layer adds the CORS headers of publishable
// operations, so the page can read every answer, Retry-After included).
func (s *Service) sdkTrack(w http.ResponseWriter, req *api.Request) error {
	body, err := readBody(req.HTTP, "text/plain", "application/json")
	if err != nil {
		return err
	}
	ev, err := eng.DecodeSDK(body, req.Now)
	return s.record(w, req, ev, err)
}
