// Package golden_test pins every analytics answer of `make run`'s chains:
// it indexes each recorded localnet (and the recorded EVM devnet) with the
// chain settings of config/local.yaml through the real indexer, runs every
// aggregator job once, asks every analytics operation a set of URLs built
// from the route table, and compares status, freshness headers and a hash
// of each body with testdata/answers.txt.
//
// A refactoring must leave the file unchanged; a change of behaviour shows
// up in it as a reviewed diff (`go test ./internal/golden -rewrite`).
package golden_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
)

var update = flag.Bool("rewrite", false, "rewrite testdata/answers.txt with today's answers")

const answersFile = "testdata/answers.txt"

// values are the candidate values of parameters, by "group name" and then
// by name: the first is used by default, every one is tried in turn.
var values = map[string][]string{
	// path and required parameters
	"pool":                        {"1", "5", "3", "99"},
	"pool_id":                     {"1", "3", "5", "99"},
	"asset":                       {"uosmo", "uatom", "USDC", "nope"},
	"denom":                       {"uosmo", "uion", "nope"},
	"asset_in":                    {"uatom", "uosmo"},
	"asset_out":                   {"uosmo", "uusdc"},
	"dex address":                 {"osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh", "osmo1rlnwmr3j2hkgvsaf0ldere6u0ca8rdg7xvx0sk", "osmo19e2mf7cywkv7zaug6nk5f87d07fxrdgrladvym"},
	"bech32Address":               {"osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh", "osmo1rlnwmr3j2hkgvsaf0ldere6u0ca8rdg7xvx0sk"},
	"positionId":                  {"1", "2", "3", "99"},
	"strategy":                    {"atom-osmo-lp", "ion-osmo-usdc-lp", "nope"},
	"source":                      {"osmosis", "cosmoshub", "neutron"},
	"destination":                 {"cosmoshub", "osmosis", "dydx"},
	"lower_tick":                  {"-108000000", "900000", "1200000"},
	"upper_tick":                  {"342000000", "1100000", "1500000"},
	"percent":                     {"2", "5", "50"},
	"range":                       {"1d", "7d", "1h", "1mo", "1y", "all"},
	"start_date":                  {"2026-11-20", "2026-11-21", "2026-11-21T21:00:00Z", "2026-11-01"},
	"end_date":                    {"2026-11-25", "2026-11-21", "2026-11-22"},
	"denom0":                      {"uibcatom", "untrn", "uibcusdc", "unknown"},
	"denom1":                      {"untrn", "uibcusdc", "uibcatom"},
	"smart_account":               {"xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul", "xion1d2j2d5vsqqdzywgjxtfgezx72cvft3ntdgy2nshx98tmcta3t3uspxahuf"},
	"smart_account address":       {"xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul", "xion1d2j2d5vsqqdzywgjxtfgezx72cvft3ntdgy2nshx98tmcta3t3uspxahuf"},
	"authenticator":               {"3N30m9lcivKdrMmlOQHvB0emxjrLw0r2BKhbgofHr14=", "0x76cc249d013e3e2211e73a53f35bbbdd1cf9971c"},
	"role":                        {"granter", "grantee"},
	"perp address":                {"dydx10fx7sy6ywd5senxae9dwytf8jxek3t2gcen2vs", "dydx199tqg4wdlnu4qjlxchpd7seg454937hjrknju4"},
	"market":                      {"BTC-USD", "ETH-USD"},
	"validators":                  {"total"},
	"provider":                    {"stride", "pstake", "lido"},
	"providers":                   {"stride,pstake,drop,total"},
	"consumers":                   {"neutron-1,stride-1,total", "cosmoshub-4"},
	"chain_id":                    {"binance-smart-chain-56", "base-8453"},
	"chain_ids":                   {"binance-smart-chain-56,ethereum-1"},
	"token_symbol":                {"USDC", "DAI"},
	"category":                    {"cex", "dex,bridge"},
	"limit":                       {"2", "1000"},
	"offset":                      {"1"},
	"from":                        {"100"},
	"to":                          {"150"},
	"period":                      {"1", "24"},
	"dex2 period":                 {"minute", "hour", "day"},
	"periods":                     {"3"},
	"pool_ids":                    {"1,2,3"},
	"min_liquidity":               {"1"},
	"show_trades_above_amount":    {"0", "1000"},
	"show_trades_above_value":     {"0"},
	"min_all_time_trades":         {"1"},
	"max_all_time_volume_usdc":    {"1000000"},
	"first_activity_after":        {"2026-11-21"},
	"last_activity_before":        {"2026-11-30"},
	"auth_id":                     {"1"},
	"destinations":                {"total"},
	"balance_categories":          {"total"},
	"min_last_30d_volume_usdc":    {"1"},
	"max_last_30d_trades":         {"100"},
	"min_all_time_tx_count":       {"1"},
	"max_all_time_fees_usdc":      {"1000"},
	"min_all_time_fees_usdc":      {"0"},
	"min_all_time_avg_trade_size": {"1"},
}

// param returns the candidate values of p in group g: its enum, else the
// table above (group-specific first), else its default.
func param(g route.Group, p route.Param) []string {
	if v, ok := values[string(g)+" "+p.Name]; ok {
		return v
	}
	if len(p.Enum) > 0 {
		return p.Enum
	}
	if v, ok := values[p.Name]; ok {
		return v
	}
	if p.Default != "" {
		return []string{p.Default}
	}
	return nil
}

// urls builds the URLs of op: every path and required parameter at its
// first candidate; then each path or required parameter at each other
// candidate; then each optional one at each candidate.
func urls(op route.Operation, prefix string) []string {
	base := map[string]string{}
	var vary []route.Param
	for _, p := range op.Params {
		c := param(op.Group, p)
		if p.In == route.InPath || p.Required {
			if len(c) == 0 {
				c = []string{"x"}
			}
			base[p.Name] = c[0]
		}
		if len(c) > 0 {
			vary = append(vary, p)
		}
	}
	build := func(set map[string]string) string { return prefix + withParams(op, set) }
	out := []string{build(base)}
	for _, p := range vary {
		for _, v := range param(op.Group, p) {
			set := map[string]string{}
			for k, bv := range base {
				set[k] = bv
			}
			set[p.Name] = v
			if u := build(set); !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	return out
}

func TestEveryAnswerUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes every recording")
	}
	db, cfg := indexed(t)

	// The clock is fixed just after the last block of any chain.
	now := clockAfter(t, db)
	srv := apitest.Serve(t, db, cfg, now)

	got := answers(t, srv, cfg)

	// Every job rebuilt from scratch (a new version of each clears the
	// tables it owns) gives the same answers: what a job owns is complete,
	// and a rebuild leaves nothing stale.
	if _, err := db.ExecContext(context.Background(), "UPDATE aggregator_jobs SET version = 'before-rebuild'"); err != nil {
		t.Fatal(err)
	}
	apitest.RunJobs(t, db, cfg)
	if again := answers(t, srv, cfg); !slices.Equal(again, got) {
		compare(t, srv, got, again)
		t.Fatal("the answers after rebuilding every job differ")
	}
	if *update {
		if err := os.WriteFile(answersFile, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readLines(t, answersFile)
	compare(t, srv, want, got)
}

// get asks u with a fixed request id, which problem answers carry.
func get(t *testing.T, srv apitest.Server, u string) (*http.Response, []byte) {
	t.Helper()
	return srv.Get(t, u, "X-Request-Id", "golden")
}

// answers asks every URL of every analytics operation and returns one
// line per answer: status, body hash, freshness headers, URL.
func answers(t *testing.T, srv apitest.Server, cfg *config.Config) []string {
	t.Helper()
	var got []string
	for _, op := range route.Table() {
		if !op.Analytics() || op.Method != http.MethodGet {
			continue
		}
		g := cfg.API.Groups[op.Group.Base()]
		for _, u := range urls(op, g.Prefix) {
			resp, body := get(t, srv, u)
			sum := sha256.Sum256(body)
			got = append(got, fmt.Sprintf("%d %s %s %s %s", resp.StatusCode, hex.EncodeToString(sum[:8]),
				orDash(resp.Header.Get("X-Data-Height")), orDash(resp.Header.Get("X-Data-Time")), u))
			if resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("%s: %d %s", u, resp.StatusCode, body)
			}
		}
	}
	return got
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// compare reports every answer that differs, with today's body.
func compare(t *testing.T, srv apitest.Server, want, got []string) {
	t.Helper()
	byURL := func(lines []string) map[string]string {
		m := map[string]string{}
		for _, l := range lines {
			f := strings.Fields(l)
			m[f[len(f)-1]] = l
		}
		return m
	}
	w, g := byURL(want), byURL(got)
	bad := 0
	for _, l := range got {
		f := strings.Fields(l)
		u := f[len(f)-1]
		if w[u] == l {
			continue
		}
		bad++
		if bad <= 20 {
			_, body := get(t, srv, u)
			if len(body) > 600 {
				body = append(body[:600], "…"...)
			}
			t.Errorf("answer changed:\n want %s\n  got %s\n body %s", w[u], l, body)
		}
	}
	for _, l := range want {
		f := strings.Fields(l)
		if _, ok := g[f[len(f)-1]]; !ok {
			bad++
			t.Errorf("no longer asked: %s", l)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d answers differ from %s (go test ./internal/golden -rewrite rewrites it after review)", bad, len(got), answersFile)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/golden -rewrite writes it)", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}
