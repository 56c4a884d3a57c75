package devnet

import (
	"context"
	"fmt"

	sdkmath "cosmossdk.io/math"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
)

// Querier runs an ABCI query at a fixed height (*cometbft.Client does).
type Querier interface {
	ABCIQuery(ctx context.Context, path string, data []byte, height int64) ([]byte, error)
}

// BankBalance is the chain's own answer for address's balance of denom at
// height: what tests compare indexed data with.
func BankBalance(ctx context.Context, q Querier, address, denom string, height int64) (sdkmath.Int, error) {
	req, err := (&banktypes.QueryBalanceRequest{Address: address, Denom: denom}).Marshal()
	if err != nil {
		return sdkmath.Int{}, err
	}
	raw, err := q.ABCIQuery(ctx, "/cosmos.bank.v1beta1.Query/Balance", req, height)
	if err != nil {
		return sdkmath.Int{}, fmt.Errorf("balance of %s at %d: %w", address, height, err)
	}
	var resp banktypes.QueryBalanceResponse
	if err := resp.Unmarshal(raw); err != nil {
		return sdkmath.Int{}, fmt.Errorf("balance of %s at %d: %w", address, height, err)
	}
	if resp.Balance == nil {
		return sdkmath.ZeroInt(), nil
	}
	return resp.Balance.Amount, nil
}
