package cosmos

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// VoucherDenom is the ICS-20 voucher denom of a full denom path:
// ibc/ + upper-hex SHA-256 of the path; a path without hops is the denom
// itself.
func VoucherDenom(path string) string {
	if BaseDenom(path) == path {
		return path
	}
	sum := sha256.Sum256([]byte(path))
	return "ibc/" + strings.ToUpper(hex.EncodeToString(sum[:]))
}

// BaseDenom is the base denom of a full denom path: the path without its
// leading port/channel hops ("transfer/channel-1/untrn" → "untrn"; a base
// denom holding slashes, such as factory/<creator>/<sub>, stays whole).
func BaseDenom(path string) string {
	for {
		parts := strings.SplitN(path, "/", 3)
		if len(parts) < 3 || !strings.HasPrefix(parts[1], "channel-") {
			return path
		}
		path = parts[2]
	}
}

// ReceivedPath is the receiving chain's full denom path of an ICS-20
// packet's denom (the sender-side path): a token returning to the chain it
// came from drops the sender's hop, any other gains the receiving hop
// (ICS-20 ReceiverChainIsSource).
func ReceivedPath(srcPort, srcChannel, dstPort, dstChannel, denom string) string {
	if rest, ok := strings.CutPrefix(denom, srcPort+"/"+srcChannel+"/"); ok {
		return rest
	}
	return dstPort + "/" + dstChannel + "/" + denom
}
