// Package app binds the domains: for each, the handlers of its endpoint
// groups and the aggregator jobs of its reports (domains.go lists them,
// one file each). It is the one package that sees both the API and the
// aggregator; neither sees the other.
package app

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

// Deps are what the handlers report to: logs and Prometheus metrics.
type Deps struct {
	Log      *slog.Logger
	Registry prometheus.Registerer
	// SessionDB is a direct connection to the primary for work that needs a
	// session across transactions (database.session_url); nil: db.
	SessionDB *bun.DB
}

// domain is one domain's binding.
type domain struct {
	name string
	// handlers adds the handlers of the domain's endpoint groups to h.
	handlers func(cfg *config.Config, db *bun.DB, deps Deps, h api.Handlers)
	// jobs are the domain's aggregator jobs for cfg, in the order they run.
	jobs func(cfg *config.Config) []aggregator.Job
}

// Handlers returns the handlers of every built endpoint group, without
// logs or metrics (tests).
func Handlers(cfg *config.Config, db *bun.DB) api.Handlers { return HandlersWith(cfg, db, Deps{}) }

// HandlersWith returns the handlers of every domain, reporting to deps.
func HandlersWith(cfg *config.Config, db *bun.DB, deps Deps) api.Handlers {
	h := newHandlers()
	for _, d := range domains() {
		if d.handlers != nil {
			d.handlers(cfg, db, deps, h)
		}
	}
	return h
}

// Jobs returns the aggregator jobs of every domain, in the order they must
// run (later jobs may read earlier jobs' tables).
func Jobs(cfg *config.Config) []aggregator.Job {
	var jobs []aggregator.Job
	for _, d := range domains() {
		if d.jobs != nil {
			jobs = append(jobs, d.jobs(cfg)...)
		}
	}
	return jobs
}

func newHandlers() api.Handlers {
	return api.Handlers{JSON: map[route.ID]api.Handler{}, Raw: map[route.ID]api.RawHandler{}, Admin: map[route.ID]api.AdminHandler{}}
}

// addJSON adds JSON handlers to h.
func addJSON(h api.Handlers, hs map[route.ID]api.Handler) {
	for id, fn := range hs {
		h.JSON[id] = fn
	}
}

// chainDomain is a domain whose groups read one chain (report/<domain>.Chain)
// and whose jobs aggregate it: the handlers of its services, and jobs
// only when the chain is configured.
func chainDomain(name string, chain func(*config.Config) (config.Chain, bool),
	services func(cfg *config.Config, db *bun.DB) []map[route.ID]api.Handler,
	jobs func(cfg *config.Config, ch config.Chain) []aggregator.Job) domain {
	return domain{
		name: name,
		handlers: func(cfg *config.Config, db *bun.DB, _ Deps, h api.Handlers) {
			for _, hs := range services(cfg, db) {
				addJSON(h, hs)
			}
		},
		jobs: func(cfg *config.Config) []aggregator.Job {
			if ch, ok := chain(cfg); ok {
				return jobs(cfg, ch)
			}
			return nil
		},
	}
}
