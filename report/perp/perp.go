// Package perp is the contract between the dYdX report jobs
// (aggregator/perp) and the perp and perp lens groups (api/perp): the perp
// chain, the jobs' names and the treasury modules the reports follow.
package perp

import (
	"github.com/chainlens/chainlens/config"
)

// Chain returns the perp chain: the chain of kind dydx that api.groups.perp.chain names, else the only one.
func Chain(cfg *config.Config) (config.Chain, bool) { return cfg.GroupChain("perp") }

// JobTrading is the name of the job that builds every perp report table.
const JobTrading = "perp_trading"

// TreasuryModules are the module accounts whose NATIVE balances the
// module_accounts report follows (chain-events.md §6.3), in the order of
// the answer's columns.
var TreasuryModules = []string{"community_treasury", "community_vester", "rewards_treasury", "rewards_vester"}
