package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggdex "github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/api"
	apidex "github.com/chainlens/chainlens/api/dex"
	"github.com/chainlens/chainlens/config"
	report "github.com/chainlens/chainlens/report/dex"
)

// dex is the Osmosis domain: the dex and dex lens groups.
func dex() domain {
	return domain{
		name: "dex",
		handlers: func(cfg *config.Config, db *bun.DB, _ Deps, h api.Handlers) {
			addJSON(h, apidex.New(cfg, db).Handlers())
			addJSON(h, apidex.NewEarn(cfg, db).Handlers())
			addJSON(h, apidex.NewIBC(cfg, db).Handlers())
			addJSON(h, apidex.NewLimitOrders(cfg, db).Handlers())
		},
		jobs: func(cfg *config.Config) []aggregator.Job {
			ch, ok := report.Chain(cfg)
			if !ok {
				return nil
			}
			m := report.NewMarket(ch)
			return []aggregator.Job{aggdex.Prices{Market: m}, aggdex.Volume{Market: m}, aggdex.Liquidity{Market: m}, aggdex.Revenue{Market: m},
				aggdex.Candles{Market: m}, aggdex.Activity{Market: m}, aggdex.Positions{Market: m}, aggdex.CLState{Market: m},
				aggdex.Supply{Market: m}, aggdex.Assets{Market: m}, aggdex.Earn{Market: m, Strategies: cfg.Earn.Strategies},
				aggdex.LimitOrders{Market: m}, aggdex.Staking{Market: m}, aggdex.PoolRewards{Market: m},
				aggdex.RewardsReceived{Market: m}, aggdex.LPHoldings{Market: m}, aggdex.Portfolio{Market: m}}
		},
	}
}
