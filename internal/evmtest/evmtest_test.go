package evmtest_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/evmtest"
)

// TestLocalConfigMatches: `make run` indexes the recording with the same
// tokens, CCTP contracts and labels as the tests.
func TestLocalConfigMatches(t *testing.T) {
	cfg, err := config.Load(filepath.Join("..", "..", "config", "local.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	want := evmtest.Chain("")
	for _, ch := range cfg.Chains {
		if ch.ID != evmtest.ChainID {
			continue
		}
		if ch.EVMChainID != want.EVMChainID || !reflect.DeepEqual(ch.Tokens, want.Tokens) ||
			!reflect.DeepEqual(ch.CCTP, want.CCTP) || !reflect.DeepEqual(ch.AddressLabels, want.AddressLabels) {
			t.Fatalf("local.yaml's %s differs from evmtest.Chain:\n%+v\n%+v", ch.ID, ch, want)
		}
		return
	}
	t.Fatalf("local.yaml has no chain %s", evmtest.ChainID)
}
