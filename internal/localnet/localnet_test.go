package localnet_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/localnet"
)

// TestLocalConfigMatches: `make run` indexes the recordings with the
// assets the tests use.
func TestLocalConfigMatches(t *testing.T) {
	cfg, err := config.Load(filepath.Join("..", "..", "config", "local.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []localnet.Recording{localnet.Neutron, localnet.XION, localnet.Hub} {
		found := false
		for _, ch := range cfg.Chains {
			if ch.ID == r.ChainID {
				found = true
				if ch.Kind != r.Kind || !reflect.DeepEqual(ch.Assets, r.Assets) {
					t.Errorf("local.yaml %s: kind %s assets %+v, want %s %+v", ch.ID, ch.Kind, ch.Assets, r.Kind, r.Assets)
				}
			}
		}
		if !found {
			t.Errorf("local.yaml has no chain %s", r.ChainID)
		}
	}
}
