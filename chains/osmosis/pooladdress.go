package osmosis

import (
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/address"
	"github.com/cosmos/cosmos-sdk/types/bech32"
)

// PoolAddress is the account of pool id, for every pool type: the
// poolmanager module address derived from "pool" + the big-endian id
// (x/poolmanager/types NewPoolAddress; checked against the localnet's
// truth/pools.json).
func PoolAddress(bech32Prefix string, id uint64) (string, error) {
	return bech32.ConvertAndEncode(bech32Prefix, address.Module("poolmanager", append([]byte("pool"), sdk.Uint64ToBigEndian(id)...)))
}
