package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggsa "github.com/chainlens/chainlens/aggregator/smartaccounts"
	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/route"
	apisa "github.com/chainlens/chainlens/api/smartaccounts"
	"github.com/chainlens/chainlens/config"
	report "github.com/chainlens/chainlens/report/smartaccounts"
)

// smartAccounts is the XION domain: the smart accounts group.
func smartAccounts() domain {
	return chainDomain("smart_accounts", report.Chain,
		func(cfg *config.Config, db *bun.DB) []map[route.ID]api.Handler {
			return []map[route.ID]api.Handler{apisa.New(cfg, db).Handlers()}
		},
		func(_ *config.Config, ch config.Chain) []aggregator.Job {
			return []aggregator.Job{aggsa.Job{Chain: ch}}
		})
}
