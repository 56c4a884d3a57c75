package osmosis

import "testing"

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
