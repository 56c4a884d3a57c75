// Package console is the operator console at /console on the engagement
// listener: a small web app (embedded assets, no CDN) for keys of the
// admin scope, with pages for the chains, the aggregator jobs, the API and
// the campaigns. Its numbers come from where `chainlens status` and
// /metrics take theirs (opstatus, the process's Prometheus registry, and
// the samples every process keeps of its registry: history); its actions
// go through the code the CLI and the admin API use (apikey.NewSpec, the
// admin campaign handlers).
package console

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

//go:embed assets
var assets embed.FS

// Options are what the console reads and acts on.
type Options struct {
	Config *config.Config
	DB     *bun.DB
	Auth   api.Authenticator
	// Gatherer is this process's registry: the API page's totals are
	// those of its /metrics.
	Gatherer prometheus.Gatherer
	// Admin are the admin API's handlers (campaigns), by pattern.
	Admin map[route.ID]api.AdminHandler
	Log   *slog.Logger
	Now   func() time.Time
}

// Console serves the console.
type Console struct {
	opt Options
	// path is where the console is served ({prefix}/console).
	path string
}

// New builds the console served under prefix (the engagement group's).
func New(o Options, prefix string) *Console {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Console{opt: o, path: prefix + "/console"}
}

func (c *Console) now() time.Time { return c.opt.Now() }

// Handler serves everything under the console's path; host is the
// engagement group's host pattern ("" for any).
func (c *Console) Handler(host string) http.Handler {
	mux := http.NewServeMux()
	p := host + c.path
	static, _ := fs.Sub(assets, "assets")
	files := http.StripPrefix(c.path+"/assets", http.FileServerFS(static))
	mux.Handle("GET "+p+"/assets/", noSniff(files))
	mux.HandleFunc("GET "+p+"/{$}", c.page)
	mux.HandleFunc("GET "+p, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, c.path+"/", http.StatusFound)
	})
	handle := func(pattern string, h func(w http.ResponseWriter, r *http.Request) error) {
		mux.Handle(pattern, c.serve(h))
	}
	handle("POST "+p+"/login", c.login)
	handle("POST "+p+"/logout", c.authed(c.logout))
	handle("GET "+p+"/api/session", c.authed(func(w http.ResponseWriter, r *http.Request) error {
		return api.WriteJSON(w, http.StatusOK, sessionOf(r.Context()))
	}))
	handle("GET "+p+"/api/chains", c.authed(c.chains))
	handle("GET "+p+"/api/jobs", c.authed(c.jobs))
	handle("GET "+p+"/api/api", c.authed(c.apiPage))
	handle("GET "+p+"/api/keys", c.authed(c.keys))
	handle("POST "+p+"/api/keys", c.authed(c.createKey))
	handle("POST "+p+"/api/keys/{id}/revoke", c.authed(c.revokeKey))
	// Campaigns: the admin API's own handlers, behind the session.
	// The console's path of an admin route is the route's with /api for
	// /admin: GET /admin/campaigns is GET {console}/api/campaigns.
	for _, id := range []route.ID{route.AdminListCampaigns, route.AdminImportCampaigns, route.AdminExportCampaigns,
		route.AdminGetCampaign, route.AdminPauseCampaign, route.AdminResumeCampaign} {
		h, ok := c.opt.Admin[id]
		if !ok {
			continue
		}
		handle(id.Method()+" "+p+"/api"+strings.TrimPrefix(id.Path(), "/admin"), c.authed(h))
	}
	handle("GET "+p+"/api/campaigns/{id}/report", c.authed(c.campaignReport))
	mux.Handle(p+"/", c.serve(func(w http.ResponseWriter, r *http.Request) error {
		return problem.Status(http.StatusNotFound, "no such console page or call: %s %s", r.Method, r.URL.Path)
	}))
	return mux
}

// serve writes a handler's error as problem+json; console answers are
// never cached.
func (c *Console) serve(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if err := h(w, r); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				err = problem.Status(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", maxBody)
			}
			if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
				return
			}
			p := problem.From(err, r.URL.Path)
			if p.Status >= 500 && p.Status != http.StatusServiceUnavailable {
				c.opt.Log.Error("console request failed", "path", r.URL.Path, "err", err)
			}
			problem.Write(w, p)
		}
	})
}

// maxBody bounds request bodies (a campaigns file).
const maxBody = 16 << 20

// page serves the app's one HTML page, with a policy that lets it load
// only its own scripts, styles and data.
func (c *Console) page(w http.ResponseWriter, r *http.Request) {
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, "console page missing from the build", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b)
}

func noSniff(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}
