package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/opstatus"
	"github.com/chainlens/chainlens/internal/testdb"
)

// background starts chainlens with args until the test ends; stop sends
// SIGTERM and waits for it.
func background(t *testing.T, args ...string) (stop func()) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			if strings.Contains(s.Text(), `"level":"ERROR"`) || strings.Contains(s.Text(), `"level":"WARN"`) {
				t.Logf("%s: %s", args[0], s.Text())
			}
		}
	}()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("%s did not stop on SIGTERM", args[0])
		}
	}
	t.Cleanup(stop)
	return stop
}

func call(t *testing.T, method, u, key string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, u, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestConsole runs a system (an indexer following two local chains, an
// aggregator, the API) and drives the operator console in headless
// Chromium (internal/console/ui/test/console.mjs): a visitor without a
// session and a key without the admin scope are refused, the admin key
// visits every page with no console error, creates and revokes a key,
// pauses and resumes a campaign; every number the pages show is then
// compared with `chainlens status --json`, the API's /metrics and the
// campaign report. Screenshots go to $CHAINLENS_SCREENSHOTS (else a
// temporary directory). It needs scripts/console-ui.sh (npm ci) and
// Chromium (scripts/sdk.sh installs it); it fails, never skips, without
// them.
func TestConsole(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a whole system and Chromium")
	}
	if _, err := os.Stat("../../internal/console/ui/node_modules/playwright-core"); err != nil {
		t.Fatal("internal/console/ui/node_modules is missing: run scripts/console-ui.sh (make test does)")
	}
	t.Parallel()
	db, dbURL := testdb.New(t)
	osmo := startNode(t, "../../testdata/localnet/osmosis")
	dydx := startNode(t, "../../testdata/localnet/dydx")
	apiAddr := freeAddr(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf(`database: {url: %q}
log: {level: warn}
api: {listen: %s}
console: {sample_every: 1s}
aggregator: {schedule: "@every 1s"}
chains:
  - {id: localosmosis, kind: osmosis, rpc: [%s], poll_interval: 100ms}
  - {id: localdydxprotocol, kind: dydx, rpc: [%s], poll_interval: 100ms}
`, dbURL, apiAddr, osmo, dydx)), 0o644)
	if _, stderr, code := run(t, "migrate", "up", "--config", cfg); code != 0 {
		t.Fatalf("migrate: %s", stderr)
	}
	file := filepath.Join(dir, "campaigns.json")
	_ = os.WriteFile(file, []byte(campaignFile), 0o644)
	if out, stderr, code := run(t, "campaigns", "import", file, "--config", cfg); code != 0 || !strings.Contains(out, "ids [1]") {
		t.Fatalf("campaigns import: %s %s", out, stderr)
	}
	key := func(name, scopes string) string {
		out, stderr, code := run(t, "keys", "create", "--config", cfg, "--name", name, "--scopes", scopes)
		if code != 0 {
			t.Fatalf("keys create: %s", stderr)
		}
		return strings.TrimSpace(out)
	}
	admin, other := key("ops", "admin"), key("reader", "all")

	started := time.Now()
	background(t, "index", "--config", cfg)
	stopAggregator := background(t, "aggregate", "--config", cfg)
	background(t, "serve", "--config", cfg)
	api := "http://" + apiAddr
	waitHTTP(t, api+"/healthz")

	// Both chains indexed to their node's tip, and every job run over them.
	status := func() opstatus.Status {
		out, stderr, code := run(t, "status", "--json", "--config", cfg)
		if code != 0 {
			t.Fatalf("status --json: %s", stderr)
		}
		var st opstatus.Status
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		return st
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		st := status()
		done := len(st.Chains) == 2 && len(st.Jobs) >= 20
		for _, c := range st.Chains {
			done = done && c.Started && c.Indexed > 0 && c.Indexed == c.NodeTip
		}
		// Every job has run since (its freshness reaches the tip).
		for _, j := range st.Jobs {
			done = done && !j.LastRun.IsZero() && j.LastError == "" && (j.Chain == "" || j.Height == j.Tip)
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chains not indexed or jobs not run: %+v\n%+v", st.Chains, st.Jobs)
		}
	}

	// Traffic: an impression and a click of the campaign, analytics
	// answers and a refused request, once the API process has sampled its
	// series (the charts' rates start from its first sample).
	time.Sleep(time.Until(started.Add(10 * time.Second)))
	code, body := call(t, "GET", api+"/campaign/global?position_id=keplr_home", other)
	var shown []struct {
		CampaignID int64 `json:"campaign_id"`
		AudienceID int64 `json:"audience_id"`
		Creatives  struct {
			URL string `json:"url"`
		} `json:"creatives"`
	}
	if err := json.Unmarshal(body, &shown); code != 200 || err != nil || len(shown) != 1 {
		t.Fatalf("campaign: %d %s", code, body)
	}
	click := url.Values{"url": {shown[0].Creatives.URL}, "address": {"global"}, "campaign_id": {strconv.FormatInt(shown[0].CampaignID, 10)},
		"audience_id": {strconv.FormatInt(shown[0].AudienceID, 10)}, "position_id": {"keplr_home"}}
	if code, body := call(t, "GET", api+"/click?"+click.Encode(), ""); code != 302 {
		t.Fatalf("click: %d %s", code, body)
	}
	for range 3 {
		if code, body := call(t, "GET", api+"/activity/active_whales", other); code != 200 {
			t.Fatalf("active_whales: %d %s", code, body)
		}
	}
	if code, _ := call(t, "GET", api+"/activity/active_whales?limit=nope", other); code != 400 {
		t.Fatalf("bad parameter: %d", code)
	}
	// The report built, a few seconds of history sampled, then the
	// aggregator stopped so that the jobs hold still while compared.
	var report map[string]any
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		code, body := call(t, "GET", api+"/admin/campaigns/1/report", admin)
		_ = json.Unmarshal(body, &report)
		if code == 200 && report["impressions"] == 1.0 && report["clicks"] == 1.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("campaign report: %d %s", code, body)
		}
	}
	// The charts of the last 15 minutes have a point every 8 s: two of
	// them make a rate.
	time.Sleep(time.Until(started.Add(28 * time.Second)))
	stopAggregator()

	shots := t.TempDir()
	if d := os.Getenv("CHAINLENS_SCREENSHOTS"); d != "" {
		shots = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", "test/console.mjs", api, admin, other, "1", shots)
	node.Dir = "../../internal/console/ui"
	var stdout, stderr strings.Builder
	node.Stdout, node.Stderr = &stdout, &stderr
	if err := node.Run(); err != nil {
		t.Fatalf("console in Chromium: %v\n%s\n%s", err, stderr.String(), stdout.String())
	}
	var seen struct {
		Pages      map[string]map[string]string `json:"pages"`
		CreatedKey string                       `json:"created_key"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &seen); err != nil {
		t.Fatalf("console.mjs output: %v\n%s", err, stdout.String())
	}
	shownAs := func(page, k, want string) {
		t.Helper()
		if got, ok := seen.Pages[page][k]; !ok || got != want {
			t.Errorf("%s page: %s shows %q (present %v), want %q", page, k, got, ok, want)
		}
	}

	// Chains and jobs: as `chainlens status` says.
	st := status()
	for _, c := range st.Chains {
		k := "chain." + c.ID + "."
		shownAs("chains", k+"indexed", strconv.FormatInt(c.Indexed, 10))
		shownAs("chains", k+"node_tip", strconv.FormatInt(c.NodeTip, 10))
		shownAs("chains", k+"lag", strconv.FormatInt(c.Lag, 10))
		shownAs("chains", k+"dead_letters", strconv.Itoa(len(c.DeadLetters)))
		shownAs("chains", k+"opening", c.Opening)
		shownAs("chains", k+"snapshots", c.Snapshots)
		shownAs("chains", k+"last_block_time", c.LastBlockTime.Format(time.RFC3339Nano))
		shownAs("chains", "rpc."+c.ID+".0.up", "1")
	}
	if len(st.Jobs) < 20 {
		t.Fatalf("status lists %d jobs", len(st.Jobs))
	}
	for _, j := range st.Jobs {
		k := "job." + j.Name + "."
		shownAs("jobs", k+"watermark", strconv.FormatInt(j.Watermark, 10))
		shownAs("jobs", k+"height", strconv.FormatInt(j.Height, 10))
		shownAs("jobs", k+"tip", strconv.FormatInt(j.Tip, 10))
		shownAs("jobs", k+"rows", strconv.FormatInt(j.Rows, 10))
		shownAs("jobs", k+"duration_ms", strconv.FormatInt(j.DurationMS, 10))
		lastRun := ""
		if !j.LastRun.IsZero() {
			lastRun = j.LastRun.Format(time.RFC3339Nano)
		}
		shownAs("jobs", k+"last_run", lastRun)
		shownAs("jobs", k+"last_error", j.LastError)
	}
	// Charts drawn from the history every process sampled (the indexer's
	// and the aggregator's, read by the API process's console).
	for page, charts := range map[string][]string{"chains": {"blocks", "events"}, "jobs": {"duration", "rows"}, "api": {"requests", "errors", "p50"}, "campaign": {"reach"}} {
		for _, c := range charts {
			if n, _ := strconv.Atoi(seen.Pages[page]["chart."+c]); n < 1 {
				t.Errorf("%s page: chart %s has %d points", page, c, n)
			}
		}
	}

	// API: as the serve process's /metrics says.
	_, metrics := call(t, "GET", api+"/metrics", "")
	sums := map[string]float64{}
	line := regexp.MustCompile(`(?m)^(chainlens_api_requests_total|chainlens_api_cache_lookups_total)\{(.*)\} (\S+)$`)
	for _, m := range line.FindAllStringSubmatch(string(metrics), -1) {
		v, _ := strconv.ParseFloat(m[3], 64)
		labels := map[string]string{}
		for _, kv := range regexp.MustCompile(`(\w+)="([^"]*)"`).FindAllStringSubmatch(m[2], -1) {
			labels[kv[1]] = kv[2]
		}
		if m[1] == "chainlens_api_cache_lookups_total" {
			sums["cache."+labels["result"]] += v
			continue
		}
		g := "api." + labels["group"] + "."
		sums[g+"requests"] += v
		switch labels["code"][0] {
		case '4':
			sums[g+"errors_4xx"] += v
		case '5':
			sums[g+"errors_5xx"] += v
		}
	}
	if sums["api.dex_lens.requests"] != 4 || sums["api.dex_lens.errors_4xx"] != 1 || sums["api.engagement.requests"] < 2 {
		t.Errorf("/metrics: %v", sums)
	}
	for _, g := range []string{"dex_lens", "engagement", "perp"} {
		for _, f := range []string{"requests", "errors_4xx", "errors_5xx"} {
			shownAs("api", "api."+g+"."+f, strconv.FormatFloat(sums["api."+g+"."+f], 'f', -1, 64))
		}
	}
	for _, r := range []string{"hit", "stale", "miss"} {
		shownAs("api", "cache."+r, strconv.FormatFloat(sums["cache."+r], 'f', -1, 64))
	}

	// Campaigns: as the admin API's report says.
	_, body = call(t, "GET", api+"/admin/campaigns/1/report", admin)
	report = nil
	if err := json.Unmarshal(body, &report); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"impressions", "clicks", "website_conversions", "onchain_conversions", "conversion_value_usd", "unique_wallets", "converting_wallets", "ctr"} {
		want := fmt.Sprint(report[f])
		if report[f] == nil {
			want = ""
		}
		shownAs("campaign", "report."+f, want)
	}
	shownAs("campaigns", "campaign.1.name", "CL vaults")
	// The campaign's days (its charts) add up to its report.
	var days, impressions, clicks int64
	if err := db.QueryRow(`SELECT count(*), coalesce(sum(impressions), 0), coalesce(sum(clicks), 0) FROM campaign_report_days WHERE campaign_id = 1`).Scan(&days, &impressions, &clicks); err != nil {
		t.Fatal(err)
	}
	if days != 1 || float64(impressions) != report["impressions"] || float64(clicks) != report["clicks"] {
		t.Errorf("campaign days: %d days, %d impressions, %d clicks; report %v", days, impressions, clicks, report)
	}

	// The key made in the console was revoked there.
	if seen.CreatedKey == "" {
		t.Fatal("no key created in the console")
	}
	if code, _ := call(t, "GET", api+"/activity/active_whales", seen.CreatedKey); code != 401 {
		t.Errorf("the key revoked in the console answered %d", code)
	}
	t.Logf("screenshots in %s", shots)
}
