package osmosis_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/internal/osmosistest"
)

// TestPoolAddress derives the address of every localnet pool and compares
// it with the node's own (truth/pools.json).
func TestPoolAddress(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(osmosistest.Dir(), "truth", "pools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Pools []struct{ ID, Address string } `json:"pools"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	if len(truth.Pools) != 5 {
		t.Fatalf("%d pools in truth", len(truth.Pools))
	}
	for _, p := range truth.Pools {
		id, _ := strconv.ParseUint(p.ID, 10, 64)
		if got, err := osmosis.PoolAddress("osmo", id); err != nil || got != p.Address {
			t.Errorf("pool %d: %s %v, want %s", id, got, err, p.Address)
		}
	}
}
