package console

import (
	"cmp"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/engagement"
	"github.com/chainlens/chainlens/internal/history"
	"github.com/chainlens/chainlens/internal/opstatus"
)

// spans are the chart windows a page may ask for.
var spans = map[string]time.Duration{"15m": 15 * time.Minute, "1h": time.Hour, "1d": 24 * time.Hour}

// chartPoints is about how many points a chart line has.
const chartPoints = 120

// window reads ?window= (15m, 1h, the default, or 1d).
func (c *Console) window(r *http.Request) (history.Window, error) {
	name := r.URL.Query().Get("window")
	if name == "" {
		name = "1h"
	}
	span, ok := spans[name]
	if !ok {
		return history.Window{}, problem.BadParam("window", "must be 15m, 1h or 1d")
	}
	return history.NewWindow(c.now(), span, c.opt.Config.Console.SampleEvery.D(), chartPoints), nil
}

// statusIn reads a page's window and the deployment's status.
func (c *Console) statusIn(r *http.Request) (history.Window, *opstatus.Status, error) {
	win, err := c.window(r)
	if err != nil {
		return win, nil, err
	}
	st, err := opstatus.Gather(r.Context(), c.opt.Config, c.opt.DB, opstatus.Options{})
	return win, st, err
}

// chart is one chart of a page: its title, unit and lines.
type chart struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Unit  string `json:"unit"`
	history.Chart
}

// chains is the Chains page: each chain's status (as `chainlens status`),
// its RPC endpoints' health as last sampled, and charts of blocks/s,
// events/s and lag.
func (c *Console) chains(w http.ResponseWriter, r *http.Request) error {
	win, st, err := c.statusIn(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	var charts []chart
	for _, def := range []struct {
		id, title, unit, metric string
		rate                    bool
	}{
		{"blocks", "Blocks indexed", "blocks/s", "chainlens_indexer_blocks_total", true},
		{"events", "Events indexed", "events/s", "chainlens_indexer_events_total", true},
		{"lag", "Lag behind the node", "blocks", "chainlens_indexer_lag_blocks", false},
	} {
		var ch history.Chart
		if def.rate {
			ch, err = history.Rate(ctx, c.opt.DB, def.metric, "chain", win, nil)
		} else {
			ch, err = history.Value(ctx, c.opt.DB, def.metric, "chain", 1, win, nil)
		}
		if err != nil {
			return err
		}
		charts = append(charts, chart{def.id, def.title, def.unit, ch})
	}
	// An endpoint's health as its indexer last sampled it (within two
	// sampling periods: an older sample is of a process that stopped).
	rpc, err := history.LatestOf(ctx, c.opt.DB, "chainlens_rpc_endpoint_up", c.now().Add(-2*c.opt.Config.Console.SampleEvery.D()-time.Second))
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"chains": st.Chains, "rpc": rpc, "charts": charts, "sample_every_s": c.opt.Config.Console.SampleEvery.D().Seconds()})
}

// jobs is the Jobs page: every job's state (as `chainlens status`) and,
// for ?job=, charts of its run duration, rows written and failures.
func (c *Console) jobs(w http.ResponseWriter, r *http.Request) error {
	win, st, err := c.statusIn(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	charts := []chart{}
	if job := r.URL.Query().Get("job"); job != "" {
		if !slices.ContainsFunc(st.Jobs, func(j opstatus.Job) bool { return j.Name == job }) {
			return problem.BadParam("job", "no aggregator job of that name has run")
		}
		only := func(l map[string]string) bool { return l["job"] == job }
		dur, err := history.Value(ctx, c.opt.DB, "chainlens_aggregator_last_duration_seconds", "job", 1000, win, only)
		if err != nil {
			return err
		}
		rows, err := history.Rate(ctx, c.opt.DB, "chainlens_aggregator_rows_total", "job", win, only)
		if err != nil {
			return err
		}
		fails, err := history.Rate(ctx, c.opt.DB, "chainlens_aggregator_failures_total", "job", win, only)
		if err != nil {
			return err
		}
		charts = append(charts, chart{"duration", "Last run's duration", "ms", dur}, chart{"rows", "Report rows written", "rows/s", rows},
			chart{"failures", "Failed runs", "runs/s", fails})
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"jobs": st.Jobs, "charts": charts})
}

// groupTotals are one endpoint group's requests in this process since it
// started, as its /metrics counts them.
type groupTotals struct {
	Group    string   `json:"group"`
	Requests int64    `json:"requests"`
	Errors4x int64    `json:"errors_4xx"`
	Errors5x int64    `json:"errors_5xx"`
	P50MS    *float64 `json:"p50_ms"`
	P99MS    *float64 `json:"p99_ms"`
}

// apiPage is the API page: this process's totals per group and cache
// results (its /metrics), charts of every API process's requests/s,
// latency and errors per group over time, and the keys with the most
// credits used in their current period.
func (c *Console) apiPage(w http.ResponseWriter, r *http.Request) error {
	win, err := c.window(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	ss, err := history.Collect(c.opt.Gatherer)
	if err != nil {
		return err
	}
	groups := map[string]*groupTotals{}
	cache := map[string]int64{"hit": 0, "stale": 0, "miss": 0}
	for _, s := range ss {
		l := history.ParseLabels(s.Labels)
		switch s.Metric {
		case "chainlens_api_requests_total":
			g := groups[l["group"]]
			if g == nil {
				g = &groupTotals{Group: l["group"]}
				groups[l["group"]] = g
			}
			n := int64(s.Value)
			g.Requests += n
			switch {
			case strings.HasPrefix(l["code"], "4"):
				g.Errors4x += n
			case strings.HasPrefix(l["code"], "5"):
				g.Errors5x += n
			}
		case "chainlens_api_cache_lookups_total":
			cache[l["result"]] = int64(s.Value)
		}
	}
	p50 := history.Quantiles(ss, "chainlens_api_request_duration_seconds", "group", 0.5)
	p99 := history.Quantiles(ss, "chainlens_api_request_duration_seconds", "group", 0.99)
	totals := make([]groupTotals, 0, len(groups))
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		g := groups[name]
		if v, ok := p50[name]; ok {
			ms := round3(v * 1000)
			g.P50MS = &ms
		}
		if v, ok := p99[name]; ok {
			ms := round3(v * 1000)
			g.P99MS = &ms
		}
		totals = append(totals, *g)
	}
	var charts []chart
	reqs, err := history.Rate(ctx, c.opt.DB, "chainlens_api_requests_total", "group", win, nil)
	if err != nil {
		return err
	}
	errs, err := history.RateOf(ctx, c.opt.DB, "chainlens_api_requests_total", "group", win, func(l map[string]string) bool { return strings.HasPrefix(l["code"], "5") })
	if err != nil {
		return err
	}
	charts = append(charts, chart{"requests", "Requests", "req/s", reqs}, chart{"errors", "Server errors (5xx)", "req/s", errs})
	for _, q := range []struct {
		id, title string
		q         float64
	}{{"p50", "Latency p50", 0.5}, {"p99", "Latency p99", 0.99}} {
		ch, err := history.Quantile(ctx, c.opt.DB, "chainlens_api_request_duration_seconds", "group", q.q, 1000, win)
		if err != nil {
			return err
		}
		charts = append(charts, chart{q.id, q.title, "ms", ch})
	}
	hits, err := history.Rate(ctx, c.opt.DB, "chainlens_api_cache_lookups_total", "result", win, nil)
	if err != nil {
		return err
	}
	charts = append(charts, chart{"cache", "Response cache", "lookups/s", hits})
	top, err := topKeys(r, c)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"groups": totals, "cache": cache, "charts": charts, "top_keys": top})
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// keyUsage is a key's consumption in its current period (`keys usage`).
type keyUsage struct {
	KeyID       int64     `json:"key_id"`
	Name        string    `json:"name"`
	PeriodStart time.Time `json:"period_start"`
	Calls       int64     `json:"calls"`
	Credits     int64     `json:"credits"`
	Quota       int64     `json:"quota"`
}

// currentUsage is each key's newest period of apikey.UsageReport.
func currentUsage(r *http.Request, c *Console) (map[int64]keyUsage, error) {
	rows, err := apikey.UsageReport(r.Context(), c.opt.DB)
	if err != nil {
		return nil, err
	}
	out := map[int64]keyUsage{}
	for _, u := range rows { // newest period first
		if _, seen := out[u.KeyID]; !seen {
			out[u.KeyID] = keyUsage{u.KeyID, u.Name, u.PeriodStart.UTC(), u.Calls, u.Credits, u.Quota}
		}
	}
	return out, nil
}

// topKeys are the ten keys with the most credits used in their current
// period.
func topKeys(r *http.Request, c *Console) ([]keyUsage, error) {
	usage, err := currentUsage(r, c)
	if err != nil {
		return nil, err
	}
	out := make([]keyUsage, 0, len(usage))
	for _, u := range usage {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b keyUsage) int {
		return cmp.Or(cmp.Compare(b.Credits, a.Credits), cmp.Compare(a.KeyID, b.KeyID))
	})
	return out[:min(len(out), 10)], nil
}

// keyView is a key as the console lists it (never the key itself).
type keyView struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	Hint      string    `json:"hint"`
	Scopes    []string  `json:"scopes"`
	Origins   []string  `json:"origins"`
	Quota     int64     `json:"quota_credits"`
	PeriodS   int64     `json:"quota_period_s"`
	CreatedAt time.Time `json:"created_at"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
	Usage     *keyUsage `json:"usage"`
}

// keys lists the keys with their current usage (`keys list`, `keys usage`).
func (c *Console) keys(w http.ResponseWriter, r *http.Request) error {
	ks, err := apikey.List(r.Context(), c.opt.DB)
	if err != nil {
		return err
	}
	usage, err := currentUsage(r, c)
	if err != nil {
		return err
	}
	out := make([]keyView, 0, len(ks))
	for _, k := range ks {
		v := keyView{ID: k.ID, Name: k.Name, Kind: string(k.Kind), Hint: k.Hint, Scopes: k.Scopes, Origins: k.Origins,
			Quota: k.QuotaCredits, PeriodS: k.QuotaPeriodS, CreatedAt: k.CreatedAt.UTC(), RevokedAt: k.RevokedAt.UTC()}
		if u, ok := usage[k.ID]; ok {
			v.Usage = &u
		}
		if v.Origins == nil {
			v.Origins = []string{}
		}
		out = append(out, v)
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"keys": out, "scopes": apikey.Scopes()})
}

// createKey creates a key by the CLI's rules (apikey.NewSpec) and answers
// it once. The body is a key request; period is a duration ("720h").
func (c *Console) createKey(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		apikey.Request
		Period string `json:"period"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	req := body.Request
	if body.Period != "" {
		d, err := time.ParseDuration(body.Period)
		if err != nil {
			return problem.BadParam("period", "must be a duration like 720h")
		}
		req.Period = d
	}
	spec, err := apikey.NewSpec(c.opt.Config.API, req)
	var re *apikey.RequestError
	if errors.As(err, &re) {
		return problem.BadParam(re.Field, re.Msg)
	}
	if err != nil {
		return err
	}
	raw, k, err := apikey.Create(r.Context(), c.opt.DB, spec)
	if err != nil {
		return err
	}
	c.opt.Log.Info("console: key created", "key_id", k.ID, "name", k.Name, "by_key", sessionOf(r.Context()).KeyID)
	return api.WriteJSON(w, http.StatusCreated, map[string]any{"key": raw, "id": k.ID, "name": k.Name, "kind": k.Kind, "scopes": k.Scopes})
}

// revokeKey revokes a key by id (`keys revoke`). Revoking the session's
// own key ends the session.
func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return problem.BadParam("id", "must be a key id")
	}
	n, err := apikey.Revoke(r.Context(), c.opt.DB, strconv.FormatInt(id, 10))
	if err != nil {
		return err
	}
	if n == 0 {
		return problem.Status(http.StatusNotFound, "no live key with id %d", id)
	}
	c.opt.Log.Info("console: key revoked", "key_id", id, "by_key", sessionOf(r.Context()).KeyID)
	return api.WriteJSON(w, http.StatusOK, map[string]any{"revoked": id})
}

// campaignReport is a campaign's report (the admin API's) with its days.
func (c *Console) campaignReport(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return problem.BadParam("id", "must be a positive campaign id")
	}
	rep, err := engagement.ReadReport(r.Context(), c.opt.DB, id)
	switch {
	case errors.Is(err, engagement.ErrNotFound):
		return problem.Status(http.StatusNotFound, "%v", err)
	case errors.Is(err, engagement.ErrNoReport):
		rep = nil // the page says the report is not built yet
	case err != nil:
		return err
	}
	days, err := engagement.ReadReportDays(r.Context(), c.opt.DB, id)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"campaign_id": id, "report": rep, "days": days})
}

// decodeJSON reads a JSON body, refusing unknown fields.
func decodeJSON(r *http.Request, v any) error {
	if mt := r.Header.Get("Content-Type"); !strings.HasPrefix(mt, "application/json") {
		return problem.Status(http.StatusUnsupportedMediaType, "the body must be JSON (Content-Type: application/json)")
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return problem.Status(http.StatusBadRequest, "the body is not a valid request: %v", err)
	}
	return nil
}
