package cosmos

import (
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// DenomPattern is the regular expression a Cosmos SDK denom matches (the
// SDK's default: a letter, then 2 to 127 letters, digits or / : . _ -),
// anchored.
var DenomPattern = "^" + sdk.DefaultCoinDenomRegex() + "$"

// ValidDenom reports whether s can be a denom on a Cosmos SDK chain (the
// SDK's own rule, sdk.ValidateDenom): base denoms, ibc/HASH vouchers,
// factory/CREATOR/SUBDENOM and the like.
func ValidDenom(s string) error {
	if err := sdk.ValidateDenom(s); err != nil {
		return fmt.Errorf("%q is not a denom: a letter, then 2 to 127 letters, digits or / : . _ -", s)
	}
	return nil
}
