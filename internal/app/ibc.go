package app

import (
	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/ibc"
	"github.com/chainlens/chainlens/config"
)

// ibcDomain is the IBC packets of every cosmos chain (read by the dex
// group's transfer status endpoints, bound with the dex handlers).
func ibcDomain() domain {
	return domain{
		name: "ibc",
		jobs: func(cfg *config.Config) []aggregator.Job {
			var jobs []aggregator.Job
			for _, ch := range cfg.Chains {
				if !ch.IsEVM() {
					jobs = append(jobs, ibc.Packets{Chain: ch, Chains: cfg.Chains, Channels: cfg.IBC.Channels})
				}
			}
			return jobs
		},
	}
}
