package cosmos

import (
	"bytes"
	"encoding/hex"
	"slices"

	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/chainlens/chainlens/chains"
)

// setInvolved fills each message's Addresses: the account bytes of its
// tx's signers and fee payer, of every address in its decoded body, and
// of every address in the attribute values of its own events (msg_index),
// whatever their bech32 prefix (osmo1…, osmovaloper1… and cosmos1… of one
// key are the same 20 bytes) or an 0x EVM address. Rows keyed by these
// bytes find every message touching an account on any chain.
func setInvolved(tx *chains.Tx) {
	if len(tx.Messages) == 0 {
		return
	}
	var common [][]byte
	for _, s := range append(slices.Clone(tx.Signers), tx.FeePayer) {
		if b, ok := addressBytes(s); ok {
			common = appendAddress(common, b)
		}
	}
	for i := range tx.Messages {
		m := &tx.Messages[i]
		out := slices.Clone(common)
		scanJSONStrings(m.JSON, func(s []byte) { out = appendAddressesIn(out, s) })
		for j := range tx.Events {
			ev := &tx.Events[j]
			if ev.MsgIndex != m.Index {
				continue
			}
			for _, a := range ev.Attrs {
				out = appendAddressesIn(out, []byte(a.Value))
			}
		}
		slices.SortFunc(out, bytes.Compare)
		m.Addresses = out
	}
}

// BodyAddresses are the addresses a decoded message body names (what
// setInvolved takes from it), for a body decoded after its height.
func BodyAddresses(body []byte) [][]byte {
	var out [][]byte
	scanJSONStrings(body, func(s []byte) { out = appendAddressesIn(out, s) })
	return out
}

// appendAddress adds b to set unless it holds it.
func appendAddress(set [][]byte, b []byte) [][]byte {
	for _, x := range set {
		if bytes.Equal(x, b) {
			return set
		}
	}
	return append(set, b)
}

// appendAddressesIn adds the addresses written in s: the tokens of
// letters and digits (an address inside a denom, factory/osmo1…/x, counts)
// that are bech32 addresses of 20 or 32 bytes, or 0x and 40 hex digits.
func appendAddressesIn(set [][]byte, s []byte) [][]byte {
	for i := 0; i < len(s); {
		if !isAlnum(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		if b, ok := tokenAddress(s[i:j]); ok {
			set = appendAddress(set, b)
		}
		i = j
	}
	return set
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z'
}

// bech32Charset is the data alphabet of bech32: no 1, b, i, o.
const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// isBech32Data marks the data alphabet in either case (a lookup table,
// never written after init).
var isBech32Data = func() (t [256]bool) {
	for i := range len(bech32Charset) {
		c := bech32Charset[i]
		t[c] = true
		if c >= 'a' && c <= 'z' {
			t[c-'a'+'A'] = true
		}
	}
	return t
}()

// tokenAddress returns the bytes of an address token. The cheap checks
// (length, one case, the separator, the data alphabet) turn down amounts,
// hashes and base64 before a checksum is computed.
func tokenAddress(t []byte) ([]byte, bool) {
	if len(t) == 42 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		b := make([]byte, 20)
		if _, err := hex.Decode(b, t[2:]); err == nil {
			return b, true
		}
		return nil, false
	}
	// hrp (1+) + "1" + 32 (20 bytes) or 52 (32 bytes) data chars + 6 checksum.
	if len(t) < 40 || len(t) > 90 {
		return nil, false
	}
	sep := bytes.LastIndexByte(t, '1')
	if sep < 1 {
		return nil, false
	}
	lower, upper := false, false
	for _, c := range t {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		}
	}
	if lower && upper {
		return nil, false
	}
	if n := len(t) - sep - 1; n != 38 && n != 58 {
		return nil, false
	}
	for _, c := range t[sep+1:] {
		if !isBech32Data[c] {
			return nil, false
		}
	}
	_, b, err := bech32.DecodeAndConvert(string(t))
	if err != nil || (len(b) != 20 && len(b) != 32) {
		return nil, false
	}
	return b, true
}

// AddressBytes decodes one whole address, bech32 of any prefix (either
// case) or 0x and 40 hex digits, to its 20 or 32 bytes.
func AddressBytes(s string) ([]byte, bool) { return addressBytes(s) }

// addressBytes decodes one whole address (bech32 or 0x).
func addressBytes(s string) ([]byte, bool) {
	if s == "" {
		return nil, false
	}
	return tokenAddress([]byte(s))
}

// scanJSONStrings calls fn with the text of every string in a JSON
// document (keys too; escapes left as written: addresses have none).
func scanJSONStrings(doc []byte, fn func([]byte)) {
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(doc) && doc[j] != '"' {
			if doc[j] == '\\' {
				j++
			}
			j++
		}
		if j > len(doc) {
			j = len(doc)
		}
		fn(doc[i+1 : j])
		i = j
	}
}
