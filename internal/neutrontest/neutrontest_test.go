package neutrontest_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/neutrontest"
)

// TestLocalConfigMatches: `make run` values the recording's fills with the
// assets the tests use.
func TestLocalConfigMatches(t *testing.T) {
	cfg, err := config.Load(filepath.Join("..", "..", "config", "local.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range cfg.Chains {
		if ch.ID == neutrontest.ChainID {
			if !reflect.DeepEqual(ch.Assets, neutrontest.Assets()) {
				t.Fatalf("local.yaml assets %+v, want %+v", ch.Assets, neutrontest.Assets())
			}
			return
		}
	}
	t.Fatalf("local.yaml has no chain %s", neutrontest.ChainID)
}
