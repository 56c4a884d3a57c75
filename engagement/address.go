// Package engagement selects advertising campaigns for wallet addresses,
// records their views and clicks, and records conversion events posted by
// client websites (POST /track, POST /sdk/track) durably through a bounded
// queue whose committer inserts events in batches.
package engagement

import (
	"encoding/hex"
	"errors"
	"strings"

	"github.com/cosmos/cosmos-sdk/types/bech32"
)

// Global is the pseudo-address of non-wallet-specific campaigns.
const Global = "global"

// ErrBadAddress is returned for a string that is neither a bech32 address
// nor a 0x EVM address.
var ErrBadAddress = errors.New("not a bech32 or 0x address")

// Normalize returns the form addresses are matched in: the raw bytes of a
// bech32 address (any prefix, so one cosmos key matches across chains) or
// of a 0x EVM address, as lower-case hex. Both forms share one space, so an
// Ethermint-style account matches in its bech32 and its 0x spelling. 0x
// forms longer than 20 bytes (up to 64) are accepted so that any exported
// member (always written 0x<hex>) imports back.
func Normalize(addr string) (string, error) {
	addr = strings.TrimSpace(addr)
	if len(addr) > 2 && (addr[:2] == "0x" || addr[:2] == "0X") {
		h := strings.ToLower(addr[2:])
		if len(h) < 40 || len(h) > 128 || len(h)%2 != 0 {
			return "", ErrBadAddress
		}
		if _, err := hex.DecodeString(h); err != nil {
			return "", ErrBadAddress
		}
		return h, nil
	}
	if len(addr) > 128 {
		return "", ErrBadAddress
	}
	_, raw, err := bech32.DecodeAndConvert(addr)
	if err != nil || len(raw) == 0 {
		return "", ErrBadAddress
	}
	return hex.EncodeToString(raw), nil
}

// normalizeLoose is Normalize, or the trimmed lower-cased string when the
// address does not parse (clicks and events store what they were sent).
func normalizeLoose(addr string) string {
	if n, err := Normalize(addr); err == nil {
		return n
	}
	return strings.ToLower(strings.TrimSpace(addr))
}
