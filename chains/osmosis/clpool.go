package osmosis

import (
	"fmt"
	"strconv"

	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/address"
	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/chainlens/chainlens/chains/wire"
)

// MsgCreateConcentratedPool is the type URL of the concentrated-liquidity
// pool creation message.
const MsgCreateConcentratedPool = msgCreateConcentrated

// CLTickSpacing reads tick_spacing (field 4) of a raw
// MsgCreateConcentratedPool{sender=1, denom0=2, denom1=3, tick_spacing=4,
// spread_factor=5}.
func CLTickSpacing(raw []byte) (int64, error) {
	fs, err := wire.Fields(raw)
	if err != nil {
		return 0, fmt.Errorf("create concentrated pool: %w", err)
	}
	for _, f := range fs {
		if f.Num == 4 {
			if f.Value == 0 || f.Value > 1<<40 {
				return 0, fmt.Errorf("create concentrated pool: tick spacing %d", f.Value)
			}
			return int64(f.Value), nil
		}
	}
	return 0, fmt.Errorf("create concentrated pool: no tick spacing")
}

// CLTickSpacingOf is the tick spacing of a MsgCreateConcentratedPool from
// its decoded JSON's tick_spacing (a uint64, so a decimal string) when the
// message was decoded, else from its protobuf bytes.
func CLTickSpacingOf(jsonSpacing string, raw []byte) (int64, error) {
	if jsonSpacing == "" {
		return CLTickSpacing(raw)
	}
	v, err := strconv.ParseUint(jsonSpacing, 10, 64)
	if err != nil || v == 0 || v > 1<<40 {
		return 0, fmt.Errorf("create concentrated pool: tick spacing %q", jsonSpacing)
	}
	return int64(v), nil
}

// CLIncentivesAddress is the account that holds the incentives of
// concentrated-liquidity pool id: the concentratedliquidity module address
// derived from "incentives" + the big-endian id (x/concentrated-liquidity
// model Pool.GetIncentivesAddress; checked against the localnet's
// truth/pools.json).
func CLIncentivesAddress(bech32Prefix string, id uint64) (string, error) {
	return bech32.ConvertAndEncode(bech32Prefix,
		address.Module("concentratedliquidity", append([]byte("incentives"), sdk.Uint64ToBigEndian(id)...)))
}
