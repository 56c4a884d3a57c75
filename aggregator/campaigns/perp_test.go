package campaigns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/campaigns"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/engagement"
	"github.com/chainlens/chainlens/internal/dydxtest"
)

// TestPerpTraderAudiences indexes the recorded dYdX localnet and builds
// rule audiences over its fills: the members are exactly the owners whose
// fill sides (truth/fills.json) reach the minimum notional in USD and
// number of fills (active_within_days counts fills as activity); a perp
// rule on a chain of another kind builds nothing and fails nothing.
func TestPerpTraderAudiences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, chain := dydxtest.New(t)

	// Expected from the truth: per owner, notional (quote quantums) and fills.
	volume, fills := map[string]*big.Int{}, map[string]int{}
	for _, s := range dydxtest.Fills(t) {
		n, _ := new(big.Int).SetString(s.Notional, 10)
		if volume[s.Address] == nil {
			volume[s.Address] = new(big.Int)
		}
		volume[s.Address].Add(volume[s.Address], n)
		fills[s.Address]++
	}
	expect := func(minUSD int64, minFills int) []string {
		var out []string
		for a, v := range volume {
			if v.Cmp(new(big.Int).Mul(big.NewInt(minUSD), big.NewInt(1_000_000))) >= 0 && fills[a] >= minFills {
				n, err := engagement.Normalize(a)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	rules := []struct {
		name    string
		rule    string
		minUSD  int64
		minFill int
	}{
		{"any perp trader", `"min_perp_trades": 1`, 0, 1},
		{"whales", `"min_perp_volume_usd": "10000"`, 10000, 0},
		{"busy whales", `"min_perp_volume_usd": "1000", "min_perp_trades": 40`, 1000, 40},
		{"nobody", `"min_perp_volume_usd": "1000000000"`, 1000000000, 0},
		// Active within the window: every trader, including one whose
		// orders predate the recording and who signs no tx in it.
		{"active traders", `"min_perp_trades": 1, "active_within_days": 30`, 0, 1},
	}
	f := &engagement.File{}
	for _, r := range rules {
		f.Audiences = append(f.Audiences, engagement.AudienceSpec{Name: r.name, Kind: "rule",
			Rule: json.RawMessage(fmt.Sprintf(`{"chain": %q, %s}`, chain.ID, r.rule))})
	}
	if _, err := engagement.Import(ctx, db, f); err != nil {
		t.Fatal(err)
	}
	job := campaigns.Audiences{Chains: map[string]config.Chain{chain.ID: chain}, Now: func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) },
		Log: slog.New(slog.DiscardHandler)}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := job.Run(ctx, tx, 0, aggregator.NoBound); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	nonEmpty := 0
	for _, r := range rules {
		var got []string
		if err := db.NewRaw(`SELECT m.address FROM audience_members m JOIN audiences a ON a.id = m.audience_id WHERE a.name = ? ORDER BY 1`, r.name).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		want := expect(r.minUSD, r.minFill)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: members %v, want %v", r.name, got, want)
		}
		if len(want) > 0 && len(want) < len(volume) {
			nonEmpty++
		}
	}
	if nonEmpty < 2 {
		t.Errorf("the thresholds should split the traders; only %d rules did", nonEmpty)
	}

	// A perp rule on a chain that is not dYdX builds nothing: the audience
	// keeps its members and the job does not fail.
	other := chain
	other.Kind = "cosmoshub"
	job.Chains = map[string]config.Chain{chain.ID: other}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, _, err := job.Run(ctx, tx, 0, aggregator.NoBound); err != nil {
		t.Errorf("a perp rule on a cosmoshub chain failed the job: %v", err)
	}
	var kept int
	if err := tx.NewRaw(`SELECT count(*) FROM audience_members m JOIN audiences a ON a.id = m.audience_id WHERE a.name = 'any perp trader'`).Scan(ctx, &kept); err != nil {
		t.Fatal(err)
	}
	if want := len(expect(0, 1)); kept != want {
		t.Errorf("members kept %d, want %d", kept, want)
	}
}

// TestRuleAudiencesThatCannotRefresh: a rule that cannot be evaluated now
// keeps its audience's members and lets the others refresh — an
// active_within_days window after the chain's last indexed block (which
// once counted every signer ever seen), a dex-volume rule on a chain that
// is not the dex chain (which once failed the whole job on every run).
func TestRuleAudiencesThatCannotRefresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, chain := dydxtest.New(t)
	f := &engagement.File{}
	for _, a := range []struct{ name, rule string }{
		{"recent signers", `"active_within_days": 30`},
		{"dex traders", `"min_dex_volume_usd": "1"`},
		{"perp traders", `"min_perp_trades": 1`},
	} {
		f.Audiences = append(f.Audiences, engagement.AudienceSpec{Name: a.name, Kind: "rule",
			Rule: json.RawMessage(fmt.Sprintf(`{"chain": %q, %s}`, chain.ID, a.rule))})
	}
	if _, err := engagement.Import(ctx, db, f); err != nil {
		t.Fatal(err)
	}
	run := func(now time.Time) map[string]int {
		t.Helper()
		job := campaigns.Audiences{Chains: map[string]config.Chain{chain.ID: chain}, Now: func() time.Time { return now },
			Log: slog.New(slog.DiscardHandler)}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := job.Run(ctx, tx, 0, aggregator.NoBound); err != nil {
			tx.Rollback()
			t.Fatalf("the job failed: %v", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		var rows []struct {
			Name string `bun:"name"`
			N    int    `bun:"n"`
		}
		if err := db.NewRaw(`SELECT a.name, count(m.address) AS n FROM audiences a LEFT JOIN audience_members m ON m.audience_id = a.id GROUP BY a.name`).
			Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			got[r.Name] = r.N
		}
		return got
	}
	// Within the recording's window: signers and traders are members; the
	// dex rule is skipped.
	first := run(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	if first["recent signers"] == 0 || first["perp traders"] == 0 || first["dex traders"] != 0 {
		t.Fatalf("members %v", first)
	}
	// Half a year later, with nothing indexed since: the window tells
	// nothing, and the members stay as they were (here: one marker address
	// put in their place); the perp rule (all-time) still refreshes.
	if _, err := db.ExecContext(ctx, `DELETE FROM audience_members WHERE audience_id = (SELECT id FROM audiences WHERE name = 'recent signers')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO audience_members (audience_id, address) SELECT id, 'marker' FROM audiences WHERE name = 'recent signers'`); err != nil {
		t.Fatal(err)
	}
	later := run(time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC))
	if later["recent signers"] != 1 || later["perp traders"] != first["perp traders"] {
		t.Errorf("members %v after the window moved past the indexed blocks, want the marker alone and %d perp traders", later, first["perp traders"])
	}
}
