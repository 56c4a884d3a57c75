package app

import (
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/campaigns"
	"github.com/chainlens/chainlens/api"
	apiengagement "github.com/chainlens/chainlens/api/engagement"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/engagement"
	dexreport "github.com/chainlens/chainlens/report/dex"
)

// engagementDomain is campaigns, clicks and conversions: the engagement
// group, the admin API, and the attribution jobs (conversions per indexed
// chain, then website events, rule audiences and the per-campaign report,
// which reads the conversions).
func engagementDomain() domain {
	return domain{
		name: "engagement",
		handlers: func(cfg *config.Config, db *bun.DB, deps Deps, h api.Handlers) {
			session := deps.SessionDB
			if session == nil {
				session = db
			}
			apiengagement.NewService(db, session, engagement.RecorderOptions{Log: deps.Log, Registerer: deps.Registry}).Register(h)
			chains := map[string]string{}
			for _, ch := range cfg.Chains {
				chains[ch.ID] = ch.Kind
			}
			apiengagement.NewAdmin(db, chains).Register(h)
		},
		jobs: func(cfg *config.Config) []aggregator.Job {
			var prices *campaigns.Prices // dex volume is valued at the dex chain's prices
			if ch, ok := dexreport.Chain(cfg); ok {
				prices = &campaigns.Prices{Market: dexreport.NewMarket(ch)}
			}
			// Website first: the identity links it records let the on-chain
			// jobs of the same run credit a wallet with its anonymous clicks.
			jobs := []aggregator.Job{campaigns.Website{MaxWalletsPerVisitor: cfg.Engagement.MaxWalletsPerVisitor}}
			byID := map[string]config.Chain{}
			for _, ch := range cfg.Chains {
				byID[ch.ID] = ch
				jobs = append(jobs, campaigns.Onchain{Chain: ch, Prices: prices})
			}
			return append(jobs, campaigns.Audiences{Chains: byID, Prices: prices}, campaigns.Report{}, campaigns.ReportDays{})
		},
	}
}
