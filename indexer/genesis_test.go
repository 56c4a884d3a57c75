package indexer_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdkmath "cosmossdk.io/math"

	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestGenesisBalancesOsmosisLocalnet indexes the recorded Osmosis localnet
// from its initial height and checks that every balance the node reports at
// the last height (truth/balances.json) equals the genesis rows plus the
// indexed balance changes, exactly, and that reindexing heights (and
// importing the genesis again) leaves the genesis rows as they were.
func TestGenesisBalancesOsmosisLocalnet(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, _ := testdb.New(t)
	rec, err := replaynode.Load(osmosistest.Dir())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(replaynode.New(rec, replaynode.Options{}).Handler())
	t.Cleanup(srv.Close)
	cfg := osmosistest.Chain(srv.URL)
	client, err := cometbft.New(cfg.RPC, cometbft.Retry{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), osmosis.NewAdapter(cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	if err := x.Run(ctx, osmosistest.LastHeight); err != nil {
		t.Fatal(err)
	}

	// Genesis: 8 bank balances of 34 coins, then InitChain's 3 movements
	// without events: the gentx self-delegation of osmo-val-a (10,000,000
	// OSMO from its account to the bonded pool) and the Osmosis developer
	// vesting mint (225,000,000 OSMO); and the creation of osmo-val-a with
	// that self-delegation (one staking_events row).
	var imp struct {
		InitialHeight int64 `bun:"initial_height"`
		Rows          int64 `bun:"balance_rows"`
	}
	if err := db.NewRaw("SELECT initial_height, balance_rows FROM genesis_imports WHERE chain_id = ?", cfg.ID).Scan(ctx, &imp); err != nil {
		t.Fatal(err)
	}
	if imp.InitialHeight != 1 || imp.Rows != 38 {
		t.Errorf("genesis import %+v, want initial height 1 and 38 rows", imp)
	}
	var created []string
	if err := db.NewRaw(`SELECT concat_ws(' ', delegator, validator, denom, amount) FROM staking_events
		WHERE chain_id = ? AND height = 0 AND kind = 'create_validator'`, cfg.ID).Scan(ctx, &created); err != nil {
		t.Fatal(err)
	}
	if len(created) != 1 || !strings.HasPrefix(created[0], "osmo1u8fw2qcjg52u4uamxw4dfzzc2w0f7a7c9qpqd3 osmovaloper1u8fw2qcjg52u4uamxw4dfzzc2w0f7a7c") ||
		!strings.HasSuffix(created[0], " uosmo 10000000000000") {
		t.Errorf("genesis validators %q, want osmo-val-a's self-delegation of 10,000,000 OSMO", created)
	}
	initChain := []struct {
		address, delta string
	}{
		{"osmo1u8fw2qcjg52u4uamxw4dfzzc2w0f7a7c9qpqd3", "-10000000000000"}, // validator account
		{"osmo1fl48vsnmsdzcv85q5d2q4z5ajdha8yu3aq6l09", "10000000000000"},  // bonded_tokens_pool
		{"osmo1vqy8rqqlydj9wkcyvct9zxl3hc4eqgu3d7hd9k", "225000000000000"}, // developer_vesting_unvested
	}
	var got []struct {
		Address string `bun:"address"`
		Delta   string `bun:"delta"`
	}
	if err := db.NewRaw(`SELECT address, delta::text AS delta FROM balance_changes
		WHERE chain_id = ? AND height = 0 AND tx_index = -2 AND denom = 'uosmo' ORDER BY event_index`, cfg.ID).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(initChain) {
		t.Fatalf("InitChain rows %+v", got)
	}
	for i, w := range initChain {
		if got[i].Address != w.address || got[i].Delta != w.delta {
			t.Errorf("InitChain row %d: %+v, want %+v", i, got[i], w)
		}
	}

	checkTruth := func(stage string) {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(osmosistest.Dir(), "truth", "balances.json"))
		if err != nil {
			t.Fatal(err)
		}
		var truth map[string][]struct {
			Denom  string `json:"denom"`
			Amount string `json:"amount"`
		}
		if err := json.Unmarshal(raw, &truth); err != nil {
			t.Fatal(err)
		}
		var sums []struct {
			Address string `bun:"address"`
			Denom   string `bun:"denom"`
			Amount  string `bun:"amount"`
		}
		if err := db.NewRaw(`SELECT address, denom, sum(delta)::text AS amount FROM balance_changes
			WHERE chain_id = ? AND height <= ? GROUP BY address, denom HAVING sum(delta) <> 0`, cfg.ID, osmosistest.LastHeight).Scan(ctx, &sums); err != nil {
			t.Fatal(err)
		}
		indexed := map[[2]string]string{}
		for _, s := range sums {
			indexed[[2]string{s.Address, s.Denom}] = s.Amount
		}
		n := 0
		for addr, coins := range truth {
			for _, c := range coins {
				n++
				k := [2]string{addr, c.Denom}
				if indexed[k] != c.Amount {
					t.Errorf("%s: %s %s: node %s, genesis + indexed changes %s", stage, addr, c.Denom, c.Amount, indexed[k])
				}
				delete(indexed, k)
			}
		}
		for k, v := range indexed {
			t.Errorf("%s: %s %s: indexed %s, the node has none", stage, k[0], k[1], v)
		}
		if n != 73 {
			t.Errorf("%s: %d balances in truth, want 73", stage, n)
		}
	}
	checkTruth("indexed")
	// Exact values of the three accounts InitChain moves.
	for _, c := range []struct{ address, want string }{
		{"osmo1u8fw2qcjg52u4uamxw4dfzzc2w0f7a7c9qpqd3", "10000103966386"},
		{"osmo1fl48vsnmsdzcv85q5d2q4z5ajdha8yu3aq6l09", "10002313583296"},
		{"osmo1vqy8rqqlydj9wkcyvct9zxl3hc4eqgu3d7hd9k", "224996250000000"},
	} {
		var s string
		if err := db.NewRaw(`SELECT sum(delta)::text FROM balance_changes WHERE chain_id = ? AND address = ? AND denom = 'uosmo'`, cfg.ID, c.address).Scan(ctx, &s); err != nil {
			t.Fatal(err)
		}
		if a, ok := sdkmath.NewIntFromString(s); !ok || a.String() != c.want {
			t.Errorf("%s uosmo: %s, want %s", c.address, s, c.want)
		}
	}

	// Reindexing the first heights keeps the genesis rows once.
	if err := x.Reindex(ctx, []int64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "SELECT count(*) FROM balance_changes WHERE chain_id = ? AND height = 0", cfg.ID); n != 37 {
		t.Errorf("after reindex: %d genesis rows, want 37", n)
	}
	checkTruth("reindexed")

	// Starting over imports the genesis again, once.
	if err := indexer.ResetChain(ctx, db, cfg.ID, osmosis.NewAdapter(cfg.Bech32Prefix).Tables()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "SELECT count(*) FROM genesis_imports WHERE chain_id = ?", cfg.ID); n != 0 {
		t.Errorf("after reset: %d genesis imports", n)
	}
	if err := x.Run(ctx, osmosistest.LastHeight); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "SELECT count(*) FROM balance_changes WHERE chain_id = ? AND height = 0", cfg.ID); n != 37 {
		t.Errorf("after reset and reindex: %d genesis rows, want 37", n)
	}
	checkTruth("started over")
}

// TestGenesisBalancesOtherLocalnets: on the dYdX, Neutron, Xion and Cosmos
// Hub recordings (generic cosmos adapter) every balance the node reports at
// the last height equals the genesis rows (bank genesis, gentx
// self-delegation to the bonded pool) plus the indexed changes, exactly.
func TestGenesisBalancesOtherLocalnets(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("indexes four recorded chains")
	}
	db, _ := testdb.New(t)
	for _, ln := range localnets[1:] {
		t.Run(ln.dir, func(t *testing.T) {
			dir := filepath.Join("..", "testdata", "localnet", ln.dir)
			truth := recordedBalances(t, dir)
			if len(truth) < 5 {
				t.Fatalf("%d addresses in truth", len(truth))
			}
			srv := replayServer(t, ln.dir)
			x := newIndexer(t, db, chainConfig(ln, srv.URL))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := x.Run(ctx, ln.blocks); err != nil {
				t.Fatal(err)
			}
			if n := count(t, db, "SELECT count(*) FROM genesis_imports WHERE chain_id = ? AND initial_height = 1", ln.chainID); n != 1 {
				t.Errorf("%d genesis imports", n)
			}
			coins := 0
			for addr, want := range truth {
				var sums []struct {
					Denom  string `bun:"denom"`
					Amount string `bun:"amount"`
				}
				if err := db.NewRaw(`SELECT denom, sum(delta)::text AS amount FROM balance_changes WHERE chain_id = ? AND address = ?
					GROUP BY denom HAVING sum(delta) <> 0`, ln.chainID, addr).Scan(ctx, &sums); err != nil {
					t.Fatal(err)
				}
				got := map[string]string{}
				for _, s := range sums {
					got[s.Denom] = s.Amount
				}
				for d, a := range want {
					coins++
					if got[d] != a {
						t.Errorf("%s %s: node %s, genesis + indexed changes %s", addr, d, a, got[d])
					}
					delete(got, d)
				}
				for d, a := range got {
					t.Errorf("%s %s: indexed %s, the node has none", addr, d, a)
				}
			}
			t.Logf("%d addresses, %d balances", len(truth), coins)
		})
	}
}

// recordedBalances reads a recording's bank balances at its last height in
// any of the recordings' layouts: {address: coins}, {height, balances:
// {address: coins}}, {name: {address, balances}}, or {name: {balances}}
// with the names' addresses in the README's keys line.
func recordedBalances(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "truth", "balances.json"))
	if os.IsNotExist(err) {
		raw, err = os.ReadFile(filepath.Join(dir, "truth", "bank_balances.json"))
	}
	if err != nil {
		t.Fatal(err)
	}
	type coin struct{ Denom, Amount string }
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	if b, ok := top["balances"]; ok {
		top = nil
		if err := json.Unmarshal(b, &top); err != nil {
			t.Fatal(err)
		}
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	named := map[string]string{}
	for _, m := range regexp.MustCompile("`([a-z0-9-]+)` `([a-z]+1[02-9ac-hj-np-z]{38,})`").FindAllStringSubmatch(string(readme), -1) {
		if _, ok := named[m[1]]; !ok { // the keys line comes before the valoper line
			named[m[1]] = m[2]
		}
	}
	out := map[string]map[string]string{}
	for k, v := range top {
		var coins []coin
		addr := k
		if err := json.Unmarshal(v, &coins); err != nil {
			var acct struct {
				Address  string
				Balances []coin
			}
			if err := json.Unmarshal(v, &acct); err != nil {
				continue // not an account
			}
			coins, addr = acct.Balances, acct.Address
			switch {
			case addr != "":
			case len(k) > 30 && strings.Contains(k, "1"):
				addr = k // keyed by address
			default:
				addr = named[k]
			}
		}
		if addr == "" {
			t.Fatalf("no address for %s", k)
		}
		out[addr] = map[string]string{}
		for _, c := range coins {
			out[addr][c.Denom] = c.Amount
		}
	}
	return out
}
