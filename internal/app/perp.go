package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggperp "github.com/chainlens/chainlens/aggregator/perp"
	"github.com/chainlens/chainlens/api"
	apiperp "github.com/chainlens/chainlens/api/perp"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	report "github.com/chainlens/chainlens/report/perp"
)

// perp is the dYdX domain: the perp and perp lens groups.
func perp() domain {
	return chainDomain("perp", report.Chain,
		func(cfg *config.Config, db *bun.DB) []map[route.ID]api.Handler {
			return []map[route.ID]api.Handler{apiperp.New(cfg, db).Handlers()}
		},
		func(cfg *config.Config, ch config.Chain) []aggregator.Job {
			return aggperp.Jobs(aggperp.Settings{ChainID: ch.ID, Prefix: ch.Bech32Prefix, Grants: cfg.Perp.GrantRecipients,
				BuyStake: cfg.Perp.BuyStakeAddress, Treasury: cfg.Perp.TreasurySubDAO})
		})
}
