// Package kinds maps a configured chain kind to its adapter.
package kinds

import (
	"fmt"

	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/chains/dydx"
	"github.com/chainlens/chainlens/chains/neutron"
	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/chains/xion"
	"github.com/chainlens/chainlens/config"
)

// Adapter returns the adapter of a configured cosmos chain. Osmosis and
// dYdX have their own (dex rows, perpetual fills on top of the generic ones). Other kinds whose own
// modules are not decoded yet use the generic cosmos adapter (bank,
// staking, distribution), which every cosmos kind shares.
func Adapter(c config.Chain) (chains.Adapter, error) {
	a, err := adapterOf(c)
	if err != nil || len(c.DescriptorSets) == 0 {
		return a, err
	}
	da, ok := a.(chains.DescriptorAdapter)
	if !ok {
		return nil, fmt.Errorf("chain %s: kind %q does not decode messages from descriptors (descriptor_sets)", c.ID, c.Kind)
	}
	var sets []*descriptorpb.FileDescriptorSet
	for _, n := range c.DescriptorSets {
		s, err := protoset.Shipped(n)
		if err != nil {
			return nil, fmt.Errorf("chain %s: descriptor_sets: %w", c.ID, err)
		}
		sets = append(sets, s)
	}
	if err := da.AddDescriptors(sets...); err != nil {
		return nil, fmt.Errorf("chain %s: %w", c.ID, err)
	}
	return da, nil
}

func adapterOf(c config.Chain) (chains.Adapter, error) {
	switch c.Kind {
	case "osmosis":
		return osmosis.NewAdapter(c.Bech32Prefix), nil
	case "dydx":
		return dydx.NewAdapter(c.Bech32Prefix), nil
	case "neutron":
		return neutron.NewAdapter(c.Bech32Prefix), nil
	case "xion":
		return xion.NewAdapter(c.Bech32Prefix), nil
	case "noble":
		return cosmos.NewAdapter(c.Kind, c.Bech32Prefix, "noble"), nil
	case "cosmoshub":
		return cosmos.NewAdapter(c.Kind, c.Bech32Prefix, "gaia"), nil
	case "cosmos":
		return cosmos.NewAdapter(c.Kind, c.Bech32Prefix), nil
	default:
		return nil, fmt.Errorf("chain %s: kind %q has no CometBFT adapter", c.ID, c.Kind)
	}
}
