package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggsa "github.com/chainlens/chainlens/aggregator/smartaccounts"
	"github.com/chainlens/chainlens/api"
	apisa "github.com/chainlens/chainlens/api/smartaccounts"
	"github.com/chainlens/chainlens/config"
	report "github.com/chainlens/chainlens/report/smartaccounts"
)

// smartAccounts is the XION domain: the smart accounts group.
func smartAccounts() domain {
	return domain{
		name: "smart_accounts",
		handlers: func(cfg *config.Config, db *bun.DB, _ Deps, h api.Handlers) {
			addJSON(h, apisa.New(cfg, db).Handlers())
		},
		jobs: func(cfg *config.Config) []aggregator.Job {
			if ch, ok := report.Chain(cfg); ok {
				return []aggregator.Job{aggsa.Job{Chain: ch}}
			}
			return nil
		},
	}
}
