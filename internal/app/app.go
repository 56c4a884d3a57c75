// Package app binds the built endpoint groups and report families: the
// handlers the API serves and the jobs the aggregator runs. Groups not
// listed here answer 501 until their issue is done.
package app

import (
	"log/slog"

	apiengagement "github.com/chainlens/chainlens/api/engagement"

	dex2report "github.com/chainlens/chainlens/report/dex2"
	perpreport "github.com/chainlens/chainlens/report/perp"
	sareport "github.com/chainlens/chainlens/report/smartaccounts"
	stakingreport "github.com/chainlens/chainlens/report/staking"

	dexreport "github.com/chainlens/chainlens/report/dex"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/campaigns"
	aggdex "github.com/chainlens/chainlens/aggregator/dex"
	aggdex2 "github.com/chainlens/chainlens/aggregator/dex2"
	"github.com/chainlens/chainlens/aggregator/ibc"
	aggics "github.com/chainlens/chainlens/aggregator/icsrewards"
	aggls "github.com/chainlens/chainlens/aggregator/liquidstaking"
	aggperp "github.com/chainlens/chainlens/aggregator/perp"
	aggsa "github.com/chainlens/chainlens/aggregator/smartaccounts"
	aggsc "github.com/chainlens/chainlens/aggregator/stablecoins"
	"github.com/chainlens/chainlens/api"
	apidex "github.com/chainlens/chainlens/api/dex"
	apidex2 "github.com/chainlens/chainlens/api/dex2"
	apiperp "github.com/chainlens/chainlens/api/perp"
	apisa "github.com/chainlens/chainlens/api/smartaccounts"
	apisc "github.com/chainlens/chainlens/api/stablecoins"
	apistaking "github.com/chainlens/chainlens/api/staking"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/engagement"
)

// Deps are what the handlers report to: logs and Prometheus metrics.
type Deps struct {
	Log      *slog.Logger
	Registry prometheus.Registerer
}

// Handlers returns the handlers of every built endpoint group, without
// logs or metrics (tests).
func Handlers(cfg *config.Config, db *bun.DB) api.Handlers { return HandlersWith(cfg, db, Deps{}) }

// HandlersWith returns the handlers of every built endpoint group,
// reporting to deps.
func HandlersWith(cfg *config.Config, db *bun.DB, deps Deps) api.Handlers {
	h := api.Handlers{JSON: map[string]api.Handler{}, Raw: map[string]api.RawHandler{}, Admin: map[string]api.AdminHandler{}}
	for id, fn := range apidex.New(cfg, db).Handlers() {
		h.JSON[id] = fn
	}
	for id, fn := range apidex.NewEarn(cfg, db).Handlers() {
		h.JSON[id] = fn
	}
	for id, fn := range apidex.NewIBC(cfg, db).Handlers() {
		h.JSON[id] = fn
	}
	for id, fn := range apidex.NewLimitOrders(cfg, db).Handlers() {
		h.JSON[id] = fn
	}
	for id, fn := range apiperp.New(cfg, db).Handlers() {
		h.JSON[id] = fn
	}
	for id, fn := range apidex2.New(cfg, db).Handlers() {
		h.JSON[id] = fn
	}
	for id, fn := range apisa.New(cfg, db).Handlers() {
		h.JSON[id] = fn
	}
	for id, fn := range apistaking.New(cfg, db).Handlers() {
		h.JSON[id] = fn
	}
	for id, fn := range apisc.New(cfg, db).Handlers() {
		h.JSON[id] = fn
	}
	apiengagement.NewService(db, engagement.RecorderOptions{Log: deps.Log, Registerer: deps.Registry}).Register(h)
	chains := map[string]string{}
	for _, ch := range cfg.Chains {
		chains[ch.ID] = ch.Kind
	}
	apiengagement.NewAdmin(db, chains).Register(h)
	return h
}

// Jobs returns the aggregator jobs of every built report family, in the
// order they must run (later jobs may read earlier jobs' tables).
func Jobs(cfg *config.Config) []aggregator.Job {
	var jobs []aggregator.Job
	var prices *campaigns.Prices
	if ch, ok := dexreport.Chain(cfg); ok {
		m := dexreport.NewMarket(ch)
		jobs = append(jobs, aggdex.Prices{Market: m}, aggdex.Volume{Market: m}, aggdex.Liquidity{Market: m}, aggdex.Revenue{Market: m},
			aggdex.Candles{Market: m}, aggdex.Activity{Market: m}, aggdex.Positions{Market: m}, aggdex.CLState{Market: m},
			aggdex.Supply{Market: m}, aggdex.Assets{Market: m}, aggdex.Earn{Market: m, Strategies: cfg.Earn.Strategies},
			aggdex.LimitOrders{Market: m}, aggdex.Staking{Market: m}, aggdex.PoolRewards{Market: m},
			aggdex.RewardsReceived{Market: m}, aggdex.LPHoldings{Market: m}, aggdex.Portfolio{Market: m})
		prices = &campaigns.Prices{Market: m}
	}
	if ch, ok := perpreport.Chain(cfg); ok {
		jobs = append(jobs, aggperp.Trading{ChainID: ch.ID, Prefix: ch.Bech32Prefix, Grants: cfg.Perp.GrantRecipients,
			BuyStake: cfg.Perp.BuyStakeAddress, Treasury: cfg.Perp.TreasurySubDAO})
	}
	if ch, ok := dex2report.Chain(cfg); ok {
		jobs = append(jobs, aggdex2.Job{Chain: ch})
	}
	if ch, ok := stakingreport.Chain(cfg); ok {
		jobs = append(jobs, aggls.Job{Chain: ch, Providers: cfg.Staking.Providers})
	}
	if ch, ok := stakingreport.Chain(cfg); ok {
		dex, _ := dexreport.Chain(cfg)
		jobs = append(jobs, aggics.Job{Chain: ch, Dex: dex, ConsumerChannels: cfg.Staking.ConsumerChannels})
	}
	if ch, ok := sareport.Chain(cfg); ok {
		jobs = append(jobs, aggsa.Job{Chain: ch})
	}
	for _, j := range aggsc.Jobs(cfg) {
		jobs = append(jobs, j)
	}
	// Engagement: conversions per indexed chain, then website events, rule
	// audiences and the per-campaign report (which reads the conversions).
	byID := map[string]config.Chain{}
	for _, ch := range cfg.Chains {
		byID[ch.ID] = ch
		jobs = append(jobs, campaigns.Onchain{Chain: ch, Prices: prices})
	}
	jobs = append(jobs, campaigns.Website{}, campaigns.Audiences{Chains: byID, Prices: prices}, campaigns.Report{})
	for _, ch := range cfg.Chains {
		if !ch.IsEVM() {
			jobs = append(jobs, ibc.Packets{Chain: ch, Chains: cfg.Chains, Channels: cfg.IBC.Channels})
		}
	}
	return jobs
}
