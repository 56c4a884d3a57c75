package staking_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/store/snapshots"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/localnet"
	"github.com/chainlens/chainlens/internal/testdb"
)

type flow struct {
	Labels   string      `json:"labels"`
	In       json.Number `json:"total_inflow"`
	Out      json.Number `json:"total_outflow"`
	TopIn    json.Number `json:"top_inflow"`
	TopInTx  string      `json:"top_inflow_tx_id"`
	TopOut   json.Number `json:"top_outflow"`
	TopOutTx string      `json:"top_outflow_tx_id"`
}

// expectedFlow is one provider flow as the driver's action log records it.
type expectedFlow struct {
	provider string
	in       bool
	amount   *big.Rat // ATOM
	tx       string
}

// actionFlows reads actions.md: every successful delegate and redeem
// (in) and unbond and tokenize (out) a provider sent.
func actionFlows(t *testing.T) []expectedFlow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(localnet.Hub.Dir(), "actions.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"stride-ica": "stride", "pstake-ica": "pstake", "quicksilver-ica": "quicksilver", "drop-ica": "drop"}
	amount := regexp.MustCompile(`"amount":"([0-9]+)`)
	var out []expectedFlow
	for _, line := range strings.Split(string(b), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 8 {
			continue
		}
		action, sender, params, result := strings.TrimSpace(cols[4]), strings.TrimSpace(cols[5]), cols[6], strings.TrimSpace(cols[7])
		p, ok := names[sender]
		if !ok || !strings.HasPrefix(result, "ok") {
			continue
		}
		var in bool
		switch action {
		case "staking delegate", "liquid redeem-tokens":
			in = true
		case "staking unbond", "liquid tokenize-share":
		default:
			continue
		}
		m := amount.FindStringSubmatch(params)
		if m == nil {
			t.Fatalf("no amount in %s", line)
		}
		v, _ := new(big.Rat).SetString(m[1])
		out = append(out, expectedFlow{p, in, v.Quo(v, big.NewRat(1_000_000, 1)), strings.Trim(strings.TrimSpace(cols[3]), "`")})
	}
	return out
}

// TestFlowByProvider checks the daily flows of every provider and of all
// of them against the driver's own log of the providers' transactions.
func TestFlowByProvider(t *testing.T) {
	t.Parallel()
	want := actionFlows(t)
	if len(want) < 20 {
		t.Fatalf("%d provider flows in actions.md", len(want))
	}
	db, _ := testdb.New(t)
	ch := localnet.Hub.Index(t, db)
	// The recording has no cancelled unbonding: one is added to a
	// successful tx, as the staking module emits it. The stake returns to
	// the provider: an inflow.
	var tx struct {
		Height  int64  `bun:"height"`
		TxIndex int    `bun:"tx_index"`
		Hash    string `bun:"hash"`
	}
	ctx := context.Background()
	if err := db.NewRaw("SELECT height, tx_index, hash FROM txs WHERE chain_id = ? AND code = 0 ORDER BY height LIMIT 1", ch.ID).Scan(ctx, &tx); err != nil {
		t.Fatal(err)
	}
	drop := localnet.HubProviders()["drop"][0]
	if _, err := db.ExecContext(ctx, `INSERT INTO events (chain_id, height, tx_index, event_index, msg_index, mode, type, attributes)
		VALUES (?, ?, ?, 999, 0, '', 'cancel_unbonding_delegation', ?)`, ch.ID, tx.Height, tx.TxIndex,
		`[{"key":"validator","value":"cosmosvaloper1x"},{"key":"delegator","value":"`+drop+`"},{"key":"amount","value":"7000000uatom"},{"key":"creation_height","value":"5"}]`); err != nil {
		t.Fatal(err)
	}
	want = append(want, expectedFlow{"drop", true, big.NewRat(7, 1), strings.ToUpper(tx.Hash)})
	cfg := &config.Config{Chains: []config.Chain{ch}, Staking: config.Staking{Providers: localnet.HubProviders()}}
	apitest.RunJobs(t, db, cfg)
	cfg.API = apitest.DefaultAPI(t, true)
	s := apitest.Serve(t, db, cfg, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	srv := s
	for _, provider := range []string{"stride", "pstake", "quicksilver", "drop", "total"} {
		in, out, topIn, topOut := new(big.Rat), new(big.Rat), new(big.Rat), new(big.Rat)
		topInTx, topOutTx := map[string]bool{}, map[string]bool{}
		for _, f := range want {
			if provider != "total" && f.provider != provider {
				continue
			}
			sum, top, txs := in, topIn, topInTx
			if !f.in {
				sum, top, txs = out, topOut, topOutTx
			}
			sum.Add(sum, f.amount)
			switch f.amount.Cmp(top) {
			case 1:
				top.Set(f.amount)
				clear(txs)
				txs[f.tx] = true
			case 0:
				txs[f.tx] = true
			}
		}
		path := "/staking/liquid/flow_by_provider?provider=" + provider
		resp, body := srv.Get(t, path)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		_, doc := srv.Get(t, "/openapi.json")
		apitest.Validate(t, doc, "GET", path, resp, body)
		var got []flow
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Labels != "2026-11-21 00:00:00" {
			t.Fatalf("%s: %s (the recording spans one UTC day)", provider, body)
		}
		// A day belongs to the range when its start is in it.
		if _, body := srv.Get(t, path+"&start_date=2026-11-21T01:00:00Z"); strings.TrimSpace(string(body)) != "[]" {
			t.Errorf("a range starting after midnight: %s", body)
		}
		g := got[0]
		check := func(what string, n json.Number, w *big.Rat) {
			r, _ := new(big.Rat).SetString(string(n))
			if r == nil || r.Cmp(w) != 0 {
				t.Errorf("%s %s = %s, want %s", provider, what, n, w.FloatString(6))
			}
		}
		check("inflow", g.In, in)
		check("outflow", g.Out, out)
		check("top inflow", g.TopIn, topIn)
		check("top outflow", g.TopOut, topOut)
		if !topInTx[strings.ToUpper(g.TopInTx)] || (topOut.Sign() > 0 && !topOutTx[strings.ToUpper(g.TopOutTx)]) {
			t.Errorf("%s top txs %s / %s, want one of %v / %v", provider, g.TopInTx, g.TopOutTx, topInTx, topOutTx)
		}
	}
	if resp, body := srv.Get(t, "/staking/liquid/flow_by_provider?provider=lido"); resp.StatusCode != 400 {
		t.Errorf("unknown provider: %d %s", resp.StatusCode, body)
	}
}

// TestShareByProvider stores delegation snapshots as the snapshotter does
// (snapshots.Store of the rows snapshot.Take returns; Take itself is checked
// against a real node in indexer/snapshot) at two heights of one day and
// one of the next, and reads each provider's balance at each day's last.
func TestShareByProvider(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ch := localnet.Hub.Index(t, db)
	ctx := context.Background()
	stride, pstake := localnet.HubProviders()["stride"][0], localnet.HubProviders()["pstake"][0]
	val1, val2 := "cosmosvaloper1jcqf85z23w8ftaazfeee7xws3mrrw02sgpaqjx", "cosmosvaloper1tqpdh2vxrxlth74u42ej9rdjavlhnwxv2pgzn8"
	del := func(delegator, validator, amount string) snapshots.Row {
		return snapshots.Row{Kind: snapshots.KindDelegation, Key: delegator + "/" + validator, Denom: "uatom", Amount: amount}
	}
	taken := snapshots.Row{Kind: snapshots.KindTaken, Key: snapshots.KindDelegation, Data: json.RawMessage(`{"rows": 2}`)}
	// Two snapshots on the day before the recording's (its last one
	// counts), none on the recording's day: the series, which starts on the
	// day of the first indexed block, carries the last snapshot forward.
	day0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, s := range []struct {
		height int64
		at     time.Time
		rows   []snapshots.Row
	}{
		{10, day0, []snapshots.Row{del(stride, val1, "1000000"), del(pstake, val1, "5"), taken}},
		{20, day0.Add(time.Hour), []snapshots.Row{del(stride, val1, "2000000"), del(stride, val2, "981750000"), taken}},
	} {
		if err := snapshots.Store(ctx, db, ch.ID, s.height, s.at, s.rows); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &config.Config{Chains: []config.Chain{ch}, Staking: config.Staking{Providers: localnet.HubProviders()}}
	apitest.RunJobs(t, db, cfg)
	cfg.API = apitest.DefaultAPI(t, true)
	srv := apitest.Serve(t, db, cfg, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	var got []map[string]any
	srv.GetJSON(t, "/staking/liquid/share_by_provider?providers=stride,pstake,drop,total", &got)
	want := `[{"drop":"0","labels":"2026-11-21 00:00:00","pstake":"0","stride":"983.75","total":"983.75"}]`
	if !sameSeries(got, want) {
		b, _ := json.Marshal(got)
		t.Errorf("got %s\nwant %s", b, want)
	}
	var total []map[string]any
	srv.GetJSON(t, "/staking/liquid/share_by_provider", &total)
	if len(total) != 1 || fmt.Sprint(total[0]["total"]) != "983.75" || len(total[0]) != 2 {
		t.Errorf("default total: %v", total)
	}
	if _, body := srv.Get(t, "/staking/liquid/share_by_provider?start_date=2026-11-21T01:00:00Z"); strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("a range starting after midnight: %s", body)
	}
}

// sameSeries compares decoded series rows with the expected ones, numbers
// as their decimal text.
func sameSeries(got []map[string]any, want string) bool {
	var w []map[string]string
	if err := json.Unmarshal([]byte(want), &w); err != nil || len(w) != len(got) {
		return false
	}
	for i := range w {
		if len(w[i]) != len(got[i]) {
			return false
		}
		for k, v := range w[i] {
			if fmt.Sprint(got[i][k]) != v {
				return false
			}
		}
	}
	return true
}
