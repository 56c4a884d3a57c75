package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggics "github.com/chainlens/chainlens/aggregator/icsrewards"
	aggls "github.com/chainlens/chainlens/aggregator/liquidstaking"
	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/route"
	apistaking "github.com/chainlens/chainlens/api/staking"
	"github.com/chainlens/chainlens/config"
	dexreport "github.com/chainlens/chainlens/report/dex"
	report "github.com/chainlens/chainlens/report/staking"
)

// staking is the Cosmos Hub domain: the multi-chain staking group
// (liquid staking, ICS rewards valued at the dex chain's prices).
func staking() domain {
	return chainDomain("staking", report.Chain,
		func(cfg *config.Config, db *bun.DB) []map[route.ID]api.Handler {
			return []map[route.ID]api.Handler{apistaking.New(cfg, db).Handlers()}
		},
		func(cfg *config.Config, ch config.Chain) []aggregator.Job {
			dex, _ := dexreport.Chain(cfg)
			return []aggregator.Job{aggls.Job{Chain: ch, Providers: cfg.Staking.Providers},
				aggics.Job{Chain: ch, Dex: dex, ConsumerChannels: cfg.Staking.ConsumerChannels}}
		})
}
