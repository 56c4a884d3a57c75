// Package kinds maps a configured chain kind to its adapter.
package kinds

import (
	"fmt"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/chains/dydx"
	"github.com/chainlens/chainlens/chains/neutron"
	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/chains/xion"
	"github.com/chainlens/chainlens/config"
)

// Adapter returns the adapter of a configured cosmos chain. Osmosis and
// dYdX have their own (dex rows, perpetual fills on top of the generic ones). Other kinds whose own
// modules are not decoded yet use the generic cosmos adapter (bank,
// staking, distribution), which every cosmos kind shares.
func Adapter(c config.Chain) (chains.Adapter, error) {
	switch c.Kind {
	case "osmosis":
		return osmosis.NewAdapter(c.Bech32Prefix), nil
	case "dydx":
		return dydx.NewAdapter(c.Bech32Prefix), nil
	case "neutron":
		return neutron.NewAdapter(c.Bech32Prefix), nil
	case "xion":
		return xion.NewAdapter(c.Bech32Prefix), nil
	case "cosmoshub", "noble", "cosmos":
		return cosmos.NewAdapter(c.Kind, c.Bech32Prefix), nil
	default:
		return nil, fmt.Errorf("chain %s: kind %q has no CometBFT adapter", c.ID, c.Kind)
	}
}
