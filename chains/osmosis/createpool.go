package osmosis

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"cosmossdk.io/math"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/wire"
)

// Create-pool message type URLs (chain-events.md §5.2, §5.3).
const (
	msgCreateBalancer     = "/osmosis.gamm.poolmodels.balancer.v1beta1.MsgCreateBalancerPool"
	msgCreateStableswap   = "/osmosis.gamm.poolmodels.stableswap.v1beta1.MsgCreateStableswapPool"
	msgCreateConcentrated = "/osmosis.concentratedliquidity.poolmodel.concentrated.v1beta1.MsgCreateConcentratedPool"
	msgCreateCosmWasm     = "/osmosis.cosmwasmpool.v1beta1.MsgCreateCosmWasmPool"
	msgCreatePosition     = "/osmosis.concentratedliquidity.v1beta1.MsgCreatePosition"
)

// decodeTokensProvided reads tokens_provided (field 5, repeated Coin) of a
// MsgCreatePosition.
func decodeTokensProvided(raw []byte) ([]chains.Coin, error) {
	fs, err := wire.Fields(raw)
	if err != nil {
		return nil, err
	}
	var out []chains.Coin
	for _, f := range fs {
		if f.Num == 5 && f.Type == protowire.BytesType {
			c, err := decodeCoin(f.Bytes)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// createdPool is what a create-pool message says about its pool.
type createdPool struct {
	Type    string
	Creator string
	Denoms  []string        // concentrated: denom0, denom1
	Deposit []chains.Coin   // gamm pools: the initial deposit, in message order
	SwapFee *math.LegacyDec // swap fee, or CL spread factor
	// Weights are the balancer weights or the stableswap scaling factors,
	// one per deposit coin in the same order; nil for other pools.
	Weights []string
	// TickSpacing is a concentrated-liquidity pool's tick spacing (0 for
	// other pools).
	TickSpacing uint64
	// ExitFee is a gamm pool's exit fee (nil for other pools, or when the
	// params leave it out: zero).
	ExitFee *math.LegacyDec
}

// decodeCoin decodes cosmos.base.v1beta1.Coin{denom=1, amount=2}.
func decodeCoin(b []byte) (chains.Coin, error) {
	fs, err := wire.Fields(b)
	if err != nil {
		return chains.Coin{}, err
	}
	var c chains.Coin
	for _, f := range fs {
		switch f.Num {
		case 1:
			c.Denom = string(f.Bytes)
		case 2:
			c.Amount = string(f.Bytes)
		}
	}
	if c.Denom == "" || c.Amount == "" {
		return c, errors.New("coin without denom or amount")
	}
	return c, nil
}

// decodeDec reads a LegacyDec as gogoproto writes it (the integer of
// 10^18 units), or a plain decimal string.
func decodeDec(s string) (*math.LegacyDec, error) {
	if strings.Contains(s, ".") {
		d, err := math.LegacyNewDecFromStr(s)
		if err != nil {
			return nil, err
		}
		return &d, nil
	}
	i, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("bad decimal %q", s)
	}
	d := math.LegacyNewDecFromBigIntWithPrec(i, math.LegacyPrecision)
	return &d, nil
}

// swapFee reads PoolParams{swap_fee=1, ...} of a gamm pool.
func swapFee(b []byte) (*math.LegacyDec, error) {
	return poolParam(b, 1)
}

// exitFee reads PoolParams.exit_fee (field 2) of a gamm pool's params.
func exitFee(b []byte) (*math.LegacyDec, error) {
	return poolParam(b, 2)
}

// poolParam reads the Dec string field num of a gamm pool's PoolParams.
func poolParam(b []byte, num protowire.Number) (*math.LegacyDec, error) {
	fs, err := wire.Fields(b)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		if f.Num == num {
			return decodeDec(string(f.Bytes))
		}
	}
	return nil, nil
}

// decodeCreatePool decodes the create-pool messages by hand (their types
// are kept raw by the cosmos decoder). Other type URLs give a zero value.
func decodeCreatePool(typeURL string, raw []byte) (createdPool, error) {
	var p createdPool
	switch typeURL {
	case msgCreateBalancer:
		p.Type = "balancer"
	case msgCreateStableswap:
		p.Type = "stableswap"
	case msgCreateConcentrated:
		p.Type = "concentrated"
	case msgCreateCosmWasm:
		p.Type = "cosmwasm"
	default:
		return p, nil
	}
	fs, err := wire.Fields(raw)
	if err != nil {
		return p, err
	}
	for _, f := range fs {
		switch {
		case p.Type == "cosmwasm":
			if f.Num == 3 {
				p.Creator = string(f.Bytes)
			}
		case f.Num == 1:
			p.Creator = string(f.Bytes)
		case p.Type == "concentrated" && (f.Num == 2 || f.Num == 3):
			p.Denoms = append(p.Denoms, string(f.Bytes))
		case p.Type == "concentrated" && f.Num == 4 && f.Type == protowire.VarintType:
			p.TickSpacing = f.Value
		case p.Type == "concentrated" && f.Num == 5:
			if p.SwapFee, err = decodeDec(string(f.Bytes)); err != nil {
				return p, err
			}
		case p.Type != "concentrated" && f.Num == 2:
			if p.SwapFee, err = swapFee(f.Bytes); err != nil {
				return p, err
			}
			if p.ExitFee, err = exitFee(f.Bytes); err != nil {
				return p, err
			}
		case p.Type == "balancer" && f.Num == 3:
			// PoolAsset{token=1 Coin, weight=2}
			as, err := wire.Fields(f.Bytes)
			if err != nil {
				return p, err
			}
			weight := ""
			for _, a := range as {
				switch a.Num {
				case 1:
					c, err := decodeCoin(a.Bytes)
					if err != nil {
						return p, err
					}
					p.Deposit = append(p.Deposit, c)
				case 2:
					weight = string(a.Bytes)
				}
			}
			if _, ok := math.NewIntFromString(weight); !ok {
				return p, fmt.Errorf("pool asset weight %q", weight)
			}
			p.Weights = append(p.Weights, weight)
		case p.Type == "stableswap" && f.Num == 3:
			c, err := decodeCoin(f.Bytes)
			if err != nil {
				return p, err
			}
			p.Deposit = append(p.Deposit, c)
		case p.Type == "stableswap" && f.Num == 4:
			// repeated uint64 scaling_factors: packed bytes, or one varint each.
			if f.Type == protowire.VarintType {
				p.Weights = append(p.Weights, fmt.Sprint(f.Value))
				continue
			}
			for b := f.Bytes; len(b) > 0; {
				v, n := protowire.ConsumeVarint(b)
				if n < 0 {
					return p, protowire.ParseError(n)
				}
				p.Weights = append(p.Weights, fmt.Sprint(v))
				b = b[n:]
			}
		}
	}
	if p.Weights != nil && len(p.Weights) != len(p.Deposit) {
		return p, fmt.Errorf("%d weights or scaling factors for %d coins", len(p.Weights), len(p.Deposit))
	}
	return p, nil
}
