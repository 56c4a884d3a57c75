package osmosis

import (
	"encoding/json"
	"fmt"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
)

// Osmosis x/mint InitGenesis: when the genesis has no developer vesting
// module account, it mints developerVestingAmount of the mint denom into a
// new one, without an event (x/mint/keeper/genesis.go).
const (
	developerVestingModule = "developer_vesting_unvested"
	developerVestingAmount = 225_000_000_000_000
)

var _ chains.GenesisAdapter = (*Adapter)(nil)

// GenesisRows appends the generic genesis balances (bank genesis, gentxs)
// and the developer vesting mint of Osmosis's InitChain.
func (a *Adapter) GenesisRows(g *chains.Genesis, out *chains.Rows) error {
	gb := cosmos.NewGenesisBalances(g.ChainID)
	if err := gb.Bank(g.AppState); err != nil {
		return err
	}
	if err := gb.GenTxs(g.AppState, a.Bech32Prefix()); err != nil {
		return err
	}
	var st struct {
		Auth struct {
			Accounts []struct {
				Type string `json:"@type"`
				Name string `json:"name"`
			} `json:"accounts"`
		} `json:"auth"`
		Mint struct {
			Params struct {
				MintDenom string `json:"mint_denom"`
			} `json:"params"`
		} `json:"mint"`
	}
	if err := json.Unmarshal(g.AppState, &st); err != nil {
		return fmt.Errorf("osmosis genesis: %w", err)
	}
	exists := false
	for _, acc := range st.Auth.Accounts {
		exists = exists || acc.Name == developerVestingModule
	}
	if !exists && st.Mint.Params.MintDenom != "" {
		to, err := cosmos.ModuleAddress(a.Bech32Prefix(), developerVestingModule)
		if err != nil {
			return err
		}
		gb.Move("", to, st.Mint.Params.MintDenom, math.NewInt(developerVestingAmount))
	}
	gb.AppendTo(out)
	return nil
}
