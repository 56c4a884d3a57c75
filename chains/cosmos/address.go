package cosmos

import (
	"fmt"
	"strings"

	"github.com/cosmos/cosmos-sdk/types/bech32"
)

// NormalBech32 checks that s is a bech32 string (checksum included; BIP-173
// allows all lower or all upper case, not a mix) and returns it in lower
// case, the form chains write and rows are keyed by.
func NormalBech32(s string) (string, error) {
	if _, _, err := bech32.DecodeAndConvert(s); err != nil {
		return "", fmt.Errorf("%q is not a bech32 address: %w", s, err)
	}
	return strings.ToLower(s), nil
}
