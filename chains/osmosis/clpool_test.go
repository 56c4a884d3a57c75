package osmosis

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestCLIncentivesAddress checks the derivation against the incentives
// addresses the localnet node reports (truth/pools.json).
func TestCLIncentivesAddress(t *testing.T) {
	for id, want := range map[uint64]string{
		2: "osmo14xmgmtuawufv3p7p5amk9088mze6r7lhyjq0hf4xwactd47xwylqcrwmzk",
		5: "osmo1gv3qxuhnzzxy6x58xzt9jg3j8a9eef9p4ucwg8kj4lplhd6yp9zqjmg3sv",
	} {
		if got, err := CLIncentivesAddress("osmo", id); err != nil || got != want {
			t.Errorf("pool %d: %s, %v; want %s", id, got, err, want)
		}
	}
}

// The tick spacing comes from the decoded message, or its bytes when it was
// kept raw (rows indexed before its type was decoded).
func TestCLTickSpacingOf(t *testing.T) {
	raw := protowire.AppendVarint(protowire.AppendTag(nil, 4, protowire.VarintType), 100)
	tests := []struct {
		name    string
		json    string
		raw     []byte
		want    int64
		wantErr bool
	}{
		{"decoded", "100", nil, 100, false},
		{"raw only", "", raw, 100, false},
		{"decoded wins", "1", raw, 1, false},
		{"zero", "0", nil, 0, true},
		{"not a number", "x", raw, 0, true},
		{"too large", "1099511627777", nil, 0, true},
		{"raw without the field", "", protowire.AppendTag(nil, 1, protowire.BytesType), 0, true},
	}
	for _, tc := range tests {
		got, err := CLTickSpacingOf(tc.json, tc.raw)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: %d, %v; want %d (error %v)", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}
