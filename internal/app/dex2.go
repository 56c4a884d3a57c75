package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggdex2 "github.com/chainlens/chainlens/aggregator/dex2"
	"github.com/chainlens/chainlens/api"
	apidex2 "github.com/chainlens/chainlens/api/dex2"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	report "github.com/chainlens/chainlens/report/dex2"
)

// dex2 is the Neutron x/dex domain: the second dex chain group.
func dex2() domain {
	return chainDomain("dex2", report.Chain,
		func(cfg *config.Config, db *bun.DB) []map[route.ID]api.Handler {
			return []map[route.ID]api.Handler{apidex2.New(cfg, db).Handlers()}
		},
		func(_ *config.Config, ch config.Chain) []aggregator.Job {
			return []aggregator.Job{aggdex2.Job{Chain: ch}}
		})
}
