package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggdex "github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/api"
	apidex "github.com/chainlens/chainlens/api/dex"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	report "github.com/chainlens/chainlens/report/dex"
)

// dex is the Osmosis domain: the dex and dex lens groups.
func dex() domain {
	return chainDomain("dex", report.Chain,
		func(cfg *config.Config, db *bun.DB) []map[route.ID]api.Handler {
			return []map[route.ID]api.Handler{apidex.New(cfg, db).Handlers(), apidex.NewEarn(cfg, db).Handlers(),
				apidex.NewIBC(cfg, db).Handlers(), apidex.NewLimitOrders(cfg, db).Handlers()}
		},
		func(cfg *config.Config, ch config.Chain) []aggregator.Job {
			m := report.NewMarket(ch)
			return []aggregator.Job{aggdex.Prices{Market: m}, aggdex.Volume{Market: m}, aggdex.Liquidity{Market: m}, aggdex.Revenue{Market: m},
				aggdex.Candles{Market: m}, aggdex.Activity{Market: m}, aggdex.Positions{Market: m}, aggdex.CLState{Market: m},
				aggdex.Supply{Market: m}, aggdex.Assets{Market: m}, aggdex.Earn{Market: m, Strategies: cfg.Earn.Strategies},
				aggdex.LimitOrders{Market: m}, aggdex.Staking{Market: m}, aggdex.PoolRewards{Market: m}, aggdex.CLEarnings{Market: m},
				aggdex.RewardsReceived{Market: m}, aggdex.LPHoldings{Market: m}, aggdex.Portfolio{Market: m}}
		})
}
