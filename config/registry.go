package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// registryChain is the part of a chain-registry chain.json that chainlens reads.
type registryChain struct {
	ChainID      string `json:"chain_id"`
	ChainName    string `json:"chain_name"`
	Bech32Prefix string `json:"bech32_prefix"`
	Fees         struct {
		FeeTokens []struct {
			Denom string `json:"denom"`
		} `json:"fee_tokens"`
	} `json:"fees"`
	Staking struct {
		StakingTokens []struct {
			Denom string `json:"denom"`
		} `json:"staking_tokens"`
	} `json:"staking"`
	APIs struct {
		RPC []struct {
			Address string `json:"address"`
		} `json:"rpc"`
	} `json:"apis"`
}

// registryAssetlist is the part of a chain-registry assetlist.json that chainlens reads.
type registryAssetlist struct {
	Assets []struct {
		Base       string `json:"base"`
		Name       string `json:"name"`
		Display    string `json:"display"`
		Symbol     string `json:"symbol"`
		Coingecko  string `json:"coingecko_id"`
		DenomUnits []struct {
			Denom    string `json:"denom"`
			Exponent int    `json:"exponent"`
		} `json:"denom_units"`
		LogoURIs struct {
			PNG string `json:"png"`
			SVG string `json:"svg"`
		} `json:"logo_URIs"`
	} `json:"assets"`
}

// applyRegistry fills unset fields of the chain from its chain-registry files.
func (ch *Chain) applyRegistry(baseDir string) error {
	if ch.Registry == nil {
		return nil
	}
	if ch.Registry.Chain == "" {
		return fmt.Errorf("chain: path to chain.json is required")
	}
	var rc registryChain
	if err := readJSON(resolve(baseDir, ch.Registry.Chain), &rc); err != nil {
		return err
	}
	if ch.ID == "" {
		ch.ID = rc.ChainID
	}
	if ch.Name == "" {
		ch.Name = rc.ChainName
	}
	if ch.Bech32Prefix == "" {
		ch.Bech32Prefix = rc.Bech32Prefix
	}
	if len(ch.RPC) == 0 {
		for _, r := range rc.APIs.RPC {
			ch.RPC = append(ch.RPC, r.Address)
		}
	}
	if len(ch.FeeDenoms) == 0 {
		for _, f := range rc.Fees.FeeTokens {
			ch.FeeDenoms = append(ch.FeeDenoms, f.Denom)
		}
	}
	if ch.StakingDenom == "" && len(rc.Staking.StakingTokens) > 0 {
		ch.StakingDenom = rc.Staking.StakingTokens[0].Denom
	}
	if ch.Registry.Assetlist == "" {
		return nil
	}
	var al registryAssetlist
	if err := readJSON(resolve(baseDir, ch.Registry.Assetlist), &al); err != nil {
		return err
	}
	have := map[string]bool{}
	for _, a := range ch.Assets {
		have[a.Denom] = true
	}
	for _, a := range al.Assets {
		if have[a.Base] {
			continue
		}
		asset := Asset{Denom: a.Base, Symbol: a.Symbol, Name: a.Name, Display: a.Display, MarketDataID: a.Coingecko, Logo: a.LogoURIs.PNG}
		if asset.Logo == "" {
			asset.Logo = a.LogoURIs.SVG
		}
		for _, u := range a.DenomUnits {
			if u.Denom == a.Display {
				asset.Exponent = u.Exponent
			}
		}
		ch.Assets = append(ch.Assets, asset)
	}
	return nil
}

func resolve(baseDir, p string) string {
	if filepath.IsAbs(p) || baseDir == "" {
		return p
	}
	return filepath.Join(baseDir, p)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
