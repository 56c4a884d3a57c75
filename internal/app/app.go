// Package app binds the built endpoint groups and report families: the
// handlers the API serves and the jobs the aggregator runs. Groups not
// listed here answer 501 until their issue is done.
package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggdex "github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/api"
	apidex "github.com/chainlens/chainlens/api/dex"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/engagement"
)

// Handlers returns the handlers of every built endpoint group.
func Handlers(cfg *config.Config, db *bun.DB) api.Handlers {
	h := api.Handlers{JSON: map[string]api.Handler{}, Raw: map[string]api.RawHandler{}}
	for id, fn := range apidex.New(cfg, db).Handlers() {
		h.JSON[id] = fn
	}
	engagement.NewService(db, engagement.RecorderOptions{}).Register(h)
	return h
}

// Jobs returns the aggregator jobs of every built report family, in the
// order they must run (later jobs may read earlier jobs' tables).
func Jobs(cfg *config.Config) []aggregator.Job {
	var jobs []aggregator.Job
	if ch, ok := aggdex.Chain(cfg); ok {
		m := aggdex.NewMarket(ch)
		jobs = append(jobs, aggdex.Prices{Market: m}, aggdex.Volume{Market: m})
	}
	return jobs
}
