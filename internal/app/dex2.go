package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggdex2 "github.com/chainlens/chainlens/aggregator/dex2"
	"github.com/chainlens/chainlens/api"
	apidex2 "github.com/chainlens/chainlens/api/dex2"
	"github.com/chainlens/chainlens/config"
	report "github.com/chainlens/chainlens/report/dex2"
)

// dex2 is the Neutron x/dex domain: the second dex chain group.
func dex2() domain {
	return domain{
		name: "dex2",
		handlers: func(cfg *config.Config, db *bun.DB, _ Deps, h api.Handlers) {
			addJSON(h, apidex2.New(cfg, db).Handlers())
		},
		jobs: func(cfg *config.Config) []aggregator.Job {
			if ch, ok := report.Chain(cfg); ok {
				return []aggregator.Job{aggdex2.Job{Chain: ch}}
			}
			return nil
		},
	}
}
