// Package app binds the built endpoint groups and report families: the
// handlers the API serves and the jobs the aggregator runs. Groups not
// listed here answer 501 until their issue is done.
package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/config"
)

// Handlers returns the handlers of every built endpoint group.
func Handlers(cfg *config.Config, db *bun.DB) api.Handlers {
	_, _ = cfg, db
	return api.Handlers{JSON: map[string]api.Handler{}, Raw: map[string]api.RawHandler{}}
}

// Jobs returns the aggregator jobs of every built report family, in the
// order they must run (later jobs may read earlier jobs' tables).
func Jobs(cfg *config.Config) []aggregator.Job {
	_ = cfg
	return nil
}
