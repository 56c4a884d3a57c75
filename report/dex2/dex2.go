// Package dex2 is the contract between the Neutron x/dex report job
// (aggregator/dex2) and the second dex chain group (api/dex2).
package dex2

import (
	"github.com/chainlens/chainlens/config"
)

// Chain returns the second dex chain: the chain of kind neutron that api.groups.dex2.chain names, else the only one.
func Chain(cfg *config.Config) (config.Chain, bool) { return cfg.GroupChain("dex2") }

// Job is the name of the job that builds the dex2 report tables.
const Job = "dex2"
