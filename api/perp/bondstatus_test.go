package perp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/store/snapshots"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
)

// TestBondStatusFromSnapshots: the localnet's only validator holds 509,000
// NATIVE. A state snapshot at height 10 finds it bonded: it is listed and
// its stake is bonded. A snapshot at the last height finds it jailed and
// unbonding: after a rebuild it is no longer listed, and no NATIVE is
// bonded on the day (staking supply, share by validator).
func TestBondStatusFromSnapshots(t *testing.T) {
	t.Parallel()
	db, ch := dydxtest.New(t)
	ctx := t.Context()
	var val struct {
		Operator string `bun:"validator"`
	}
	if err := db.NewRaw(`SELECT validator FROM staking_events WHERE chain_id = ? AND kind = 'create_validator' LIMIT 1`, ch.ID).
		Scan(ctx, &val.Operator); err != nil {
		t.Fatal(err)
	}
	at := func(h int64) time.Time {
		var tm time.Time
		if err := db.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height = ?", ch.ID, h).Scan(ctx, &tm); err != nil {
			t.Fatal(err)
		}
		return tm
	}
	snap := func(h int64, status string, jailed bool) {
		data, _ := json.Marshal(map[string]any{"status": status, "jailed": jailed})
		if err := snapshots.Store(ctx, db, ch.ID, h, at(h), []snapshots.Row{
			{Kind: snapshots.KindValidator, Key: val.Operator, Denom: "adv4tnt", Amount: "509000000000000000000000", Data: data},
		}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &config.Config{Chains: []config.Chain{ch}}
	cfg.API = apitest.DefaultAPI(t, true)
	tip := at(dydxtest.LastHeight)
	srv := apitest.Serve(t, db, cfg, tip.Add(time.Hour))
	day := tip.Format(time.DateOnly)
	check := func(listing, bonded string) {
		t.Helper()
		_, body := srv.Get(t, "/aux/validator_listings")
		if got := strings.TrimSpace(string(body)); got != listing {
			t.Errorf("validator listings %s, want %s", got, listing)
		}
		_, body = srv.Get(t, "/staking/share_by_validator?validators="+val.Operator+",total&start_date="+day+"&end_date="+day)
		if want := `[{"labels":"` + day + ` 00:00:00","` + val.Operator + `":` + bonded + `,"total":` + bonded + `}]`; strings.TrimSpace(string(body)) != want {
			t.Errorf("share by validator %s, want %s", body, want)
		}
		var supply []map[string]any
		srv.GetJSON(t, "/perp/tokenomics/staking_supply?start_date="+day+"&end_date="+day, &supply)
		if len(supply) != 1 || fmt.Sprint(supply[0]["stakingSupply"]) != bonded {
			t.Errorf("staking supply %v, want %s bonded", supply, bonded)
		}
	}

	snap(10, "BOND_STATUS_BONDED", false)
	apitest.RunJobs(t, db, cfg)
	check(`[{"validator":"`+val.Operator+`","token_amount":509000}]`, "509000")

	snap(dydxtest.LastHeight, "BOND_STATUS_UNBONDING", true)
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET watermark = 0 WHERE starts_with(name, 'perp_')"); err != nil {
		t.Fatal(err)
	}
	apitest.RunJobs(t, db, cfg)
	check(`[]`, "0")
}
