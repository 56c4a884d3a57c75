package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggsc "github.com/chainlens/chainlens/aggregator/stablecoins"
	"github.com/chainlens/chainlens/api"
	apisc "github.com/chainlens/chainlens/api/stablecoins"
	"github.com/chainlens/chainlens/config"
)

// stablecoins is the EVM domain: the stablecoins group, one job per EVM chain.
func stablecoins() domain {
	return domain{
		name: "stablecoins",
		handlers: func(cfg *config.Config, db *bun.DB, _ Deps, h api.Handlers) {
			addJSON(h, apisc.New(cfg, db).Handlers())
		},
		jobs: func(cfg *config.Config) []aggregator.Job {
			var jobs []aggregator.Job
			for _, j := range aggsc.Jobs(cfg) {
				jobs = append(jobs, j)
			}
			return jobs
		},
	}
}
