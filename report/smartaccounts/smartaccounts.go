// Package smartaccounts is the contract between the XION report job
// (aggregator/smartaccounts) and the smart accounts group (api/smartaccounts).
package smartaccounts

import (
	"github.com/chainlens/chainlens/chains/xion"
	"github.com/chainlens/chainlens/config"
)

// Chain returns the smart accounts chain: the first configured chain of kind xion.
func Chain(cfg *config.Config) (config.Chain, bool) { return cfg.FirstChain(xion.Kind) }

// Job is the name of the job that builds the smart account report tables.
const Job = "smart_accounts"
