// Package smartaccounts is the contract between the XION report job
// (aggregator/smartaccounts) and the smart accounts group (api/smartaccounts).
package smartaccounts

import (
	"github.com/chainlens/chainlens/config"
)

// Chain returns the smart accounts chain: the chain of kind xion that api.groups.smart_account.chain names, else the only one.
func Chain(cfg *config.Config) (config.Chain, bool) { return cfg.GroupChain("smart_account") }

// Job is the name of the job that builds the smart account report tables.
const Job = "smart_accounts"
