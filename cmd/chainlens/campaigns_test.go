package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainlens/chainlens/internal/testdb"
)

const campaignFile = `{
  "audiences": [
    {"name": "everyone", "kind": "global"},
    {"name": "lps", "kind": "addresses", "addresses": ["osmo1xqcnyve5x5mrwwpev93xxer9venks6t2vutgzp"]}
  ],
  "campaigns": [
    {"owner": "Quasar", "name": "CL vaults", "topic": "Concentrated Liquidity",
     "start_date": "2026-01-01T00:00:00Z", "end_date": "2027-01-01T00:00:00Z", "priority": 2,
     "impression_budget": 1000, "frequency_cap": 3, "attribution_window": "72h",
     "audiences": ["lps", "everyone"],
     "creatives": [{"position_id": "keplr_home", "logo": "https://cdn.example/l.png", "title": "T", "body": "B",
                    "cta": "Go", "url": "https://app.example/?utm_source=wallet", "banner_url": null}]}
  ]
}`

func TestCampaignsCommand(t *testing.T) {
	t.Parallel()
	_, dbURL := testdb.New(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf("database: {url: %q}\nlog: {level: warn}\n", dbURL)), 0o644)
	good := filepath.Join(dir, "good.json")
	_ = os.WriteFile(good, []byte(campaignFile), 0o644)

	out, stderr, code := run(t, "campaigns", "import", good, "--config", cfg)
	if code != 0 || !strings.Contains(out, "imported 2 audiences and 1 campaigns (ids [1])") {
		t.Fatalf("import: %d %q %q", code, out, stderr)
	}
	out, _, code = run(t, "campaigns", "list", "--config", cfg)
	if code != 0 || !strings.Contains(out, "CL vaults") || !strings.Contains(out, "active") {
		t.Fatalf("list: %d %q", code, out)
	}
	if out, stderr, code = run(t, "campaigns", "pause", "1", "--config", cfg); code != 0 || !strings.Contains(out, "campaign 1 is paused") {
		t.Fatalf("pause: %d %q %q", code, out, stderr)
	}
	if out, _, _ = run(t, "campaigns", "list", "--config", cfg); !strings.Contains(out, "paused") {
		t.Errorf("list after pause: %q", out)
	}
	if out, stderr, code = run(t, "campaigns", "resume", "1", "--config", cfg); code != 0 || !strings.Contains(out, "campaign 1 is active") {
		t.Fatalf("resume: %d %q %q", code, out, stderr)
	}
	if _, stderr, code = run(t, "campaigns", "pause", "42", "--config", cfg); code == 0 || !strings.Contains(stderr, "campaign 42 does not exist") {
		t.Errorf("pause unknown: %d %q", code, stderr)
	}

	out, stderr, code = run(t, "campaigns", "export", "--config", cfg)
	if code != 0 {
		t.Fatalf("export: %d %q", code, stderr)
	}
	var exp struct {
		Audiences []map[string]any `json:"audiences"`
		Campaigns []map[string]any `json:"campaigns"`
	}
	if err := json.Unmarshal([]byte(out), &exp); err != nil || len(exp.Campaigns) != 1 || exp.Campaigns[0]["id"] != 1.0 ||
		exp.Campaigns[0]["attribution_window"] != "72h0m0s" || len(exp.Audiences) != 2 {
		t.Fatalf("export: %v %s", err, out)
	}
	// An export imports back in place.
	round := filepath.Join(dir, "export.json")
	_ = os.WriteFile(round, []byte(out), 0o644)
	if out, stderr, code = run(t, "campaigns", "import", round, "--config", cfg); code != 0 || !strings.Contains(out, "ids [1]") {
		t.Fatalf("re-import: %d %q %q", code, out, stderr)
	}

	bad := strings.NewReplacer(`"2027-01-01T00:00:00Z"`, `"2025-01-01"`, `"https://app.example/?utm_source=wallet"`, `"javascript:alert(1)"`,
		`"position_id": "keplr_home"`, `"position_id": ""`).Replace(campaignFile)
	badFile := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(badFile, []byte(bad), 0o644)
	_, stderr, code = run(t, "campaigns", "import", badFile, "--config", cfg)
	for _, want := range []string{"campaigns[0].end_date", "campaigns[0].creatives[0].url", "campaigns[0].creatives[0].position_id: must not be empty"} {
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("bad file: exit %d, stderr %q lacks %q", code, stderr, want)
		}
	}
	_ = os.WriteFile(badFile, []byte(`{"campaigns": [], "extra": 1}`), 0o644)
	if _, stderr, code = run(t, "campaigns", "import", badFile, "--config", cfg); code == 0 || !strings.Contains(stderr, "unknown field") {
		t.Errorf("unknown field: exit %d %q", code, stderr)
	}
	if out, _, _ = run(t, "campaigns", "list", "--config", cfg); strings.Count(out, "\n") != 2 {
		t.Errorf("a failed import wrote campaigns: %q", out)
	}
	if out, _, _ = run(t, "campaigns", "import", "--help"); !strings.Contains(out, `"frequency_cap"`) || !strings.Contains(out, `"goals"`) {
		t.Errorf("import help does not document the format")
	}
	// Goals and rules must name a configured chain (this config has none).
	goal := strings.Replace(campaignFile, `"audiences": ["lps", "everyone"],`,
		`"audiences": ["lps", "everyone"], "goals": [{"kind": "onchain", "chain": "osmosis-1", "msg_type": "/x.MsgY"}],`, 1)
	_ = os.WriteFile(badFile, []byte(goal), 0o644)
	if _, stderr, code = run(t, "campaigns", "import", badFile, "--config", cfg); code == 0 ||
		!strings.Contains(stderr, `campaigns[0].goals[0].chain: "osmosis-1" is not a configured chain`) {
		t.Errorf("goal on an unconfigured chain: exit %d %q", code, stderr)
	}

	// create adds one campaign; export --id prints it with its audiences;
	// update replaces it from an edited export.
	if out, stderr, code = run(t, "campaigns", "create", good, "--config", cfg); code != 0 || strings.TrimSpace(out) != "created campaign 2" {
		t.Fatalf("create: %d %q %q", code, out, stderr)
	}
	if _, stderr, code = run(t, "campaigns", "create", round, "--config", cfg); code == 0 || !strings.Contains(stderr, `use "campaigns update 1"`) {
		t.Errorf("create with an id: exit %d %q", code, stderr)
	}
	out, stderr, code = run(t, "campaigns", "export", "--id", "2", "--config", cfg)
	var one struct {
		Audiences []map[string]any `json:"audiences"`
		Campaigns []map[string]any `json:"campaigns"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil || len(one.Campaigns) != 1 || one.Campaigns[0]["id"] != 2.0 || len(one.Audiences) != 2 {
		t.Fatalf("export --id 2: %d %q %q", code, out, stderr)
	}
	edited := filepath.Join(dir, "edited.json")
	_ = os.WriteFile(edited, []byte(strings.Replace(out, `"CL vaults"`, `"CL vaults, round 2"`, 1)), 0o644)
	if out, stderr, code = run(t, "campaigns", "update", "2", edited, "--config", cfg); code != 0 || strings.TrimSpace(out) != "updated campaign 2" {
		t.Fatalf("update: %d %q %q", code, out, stderr)
	}
	if out, _, _ = run(t, "campaigns", "list", "--config", cfg); !strings.Contains(out, "CL vaults, round 2") || strings.Count(out, "\n") != 3 {
		t.Errorf("list after update: %q", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"update", "1", edited}, "the file's campaign is 2, not 1"},
		{[]string{"update", "9", good}, "campaign 9 does not exist"},
		{[]string{"update", "x", good}, "campaign id must be a positive integer"},
		{[]string{"export", "--id", "9"}, "campaign 9 does not exist"},
	} {
		if _, stderr, code = run(t, append(append([]string{"campaigns"}, c.args...), "--config", cfg)...); code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("campaigns %v: exit %d %q, want %q", c.args, code, stderr, c.want)
		}
	}

	// The report exists once the aggregator has run.
	if _, stderr, code = run(t, "campaigns", "report", "1", "--config", cfg); code == 0 || !strings.Contains(stderr, "no report yet") {
		t.Errorf("report before aggregate: exit %d %q", code, stderr)
	}
	if _, stderr, code = run(t, "aggregate", "--once", "--config", cfg); code != 0 {
		t.Fatalf("aggregate: %d %q", code, stderr)
	}
	out, stderr, code = run(t, "campaigns", "report", "1", "--config", cfg)
	var rep map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep["impressions"] != 0.0 || rep["ctr"] != nil || rep["campaign_id"] != 1.0 {
		t.Errorf("report: %d %q %q", code, out, stderr)
	}
	if _, stderr, code = run(t, "campaigns", "report", "7", "--config", cfg); code == 0 || !strings.Contains(stderr, "campaign 7 does not exist") {
		t.Errorf("report of an unknown campaign: exit %d %q", code, stderr)
	}
}
