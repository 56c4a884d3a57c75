// Package deploy_test checks the monitoring kit and the systemd units in
// deploy/ with the tools that will read them: promtool (Debian's
// prometheus package) for the rules, systemd-analyze for the units, and
// the code's own metric names for every series a rule or panel reads.
package deploy_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// promtool finds promtool, installing Debian's prometheus package when it
// is missing and the test runs as root; it skips only when that fails.
func promtool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	if os.Getuid() == 0 {
		if _, err := exec.LookPath("apt-get"); err == nil {
			cmd := exec.Command("apt-get", "install", "-y", "-qq", "prometheus")
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Logf("apt-get install prometheus: %v\n%s", err, out)
			}
		}
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed and Debian's prometheus package could not be installed (apt-get install prometheus)")
	}
	return p
}

// TestAlertRules: the rules load, and every alert and recording rule
// behaves as its unit test says (promtool test rules).
func TestAlertRules(t *testing.T) {
	tool := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "chainlens.rules.yml"},
		{"test", "rules", "chainlens.rules.test.yml"},
	} {
		cmd := exec.Command(tool, args...)
		cmd.Dir = "prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

var (
	metricName    = regexp.MustCompile(`\bchainlens_[a-z_]+\b`)
	recordingName = regexp.MustCompile(`\bchainlens:[a-z0-9_:]+\b`)
	definedMetric = regexp.MustCompile(`"(chainlens_[a-z_]+)"`)
)

// codeMetrics are the metric names the code defines (string literals in
// its non-test Go files).
func codeMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range definedMetric.FindAllSubmatch(b, -1) {
			names[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestEverySeriesExists: every metric a rule or a dashboard panel reads is
// one the code exports (histogram suffixes aside), and every recording
// rule a panel reads is defined: a renamed metric cannot silently empty a
// panel or an alert.
func TestEverySeriesExists(t *testing.T) {
	defined := codeMetrics(t)
	rules, err := os.ReadFile("prometheus/chainlens.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	dash, err := os.ReadFile("grafana/chainlens.json")
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]bool{}
	for _, m := range regexp.MustCompile(`record: (chainlens:[a-z0-9_:]+)`).FindAllSubmatch(rules, -1) {
		recorded[string(m[1])] = true
	}
	for file, b := range map[string][]byte{"rules": rules, "dashboard": dash} {
		for _, name := range metricName.FindAll(b, -1) {
			n := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(string(name), "_bucket"), "_sum"), "_count")
			if !defined[n] {
				t.Errorf("%s reads %s, which no code exports", file, name)
			}
		}
		for _, name := range recordingName.FindAll(b, -1) {
			if !recorded[string(name)] {
				t.Errorf("%s reads %s, which no rule records", file, name)
			}
		}
	}
}

// TestDashboard: the Grafana dashboard is valid JSON whose panels each
// query something, have unique ids and do not overlap on the 24-column
// grid.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("grafana/chainlens.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			GridPos struct{ H, W, X, Y int }
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard without uid or panels")
	}
	var ids []int
	taken := map[[2]int]string{}
	for _, p := range d.Panels {
		if slices.Contains(ids, p.ID) {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids = append(ids, p.ID)
		if p.GridPos.X < 0 || p.GridPos.W < 1 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H < 1 {
			t.Errorf("panel %q: grid position %+v off the grid", p.Title, p.GridPos)
		}
		for x := p.GridPos.X; x < p.GridPos.X+p.GridPos.W; x++ {
			for y := p.GridPos.Y; y < p.GridPos.Y+p.GridPos.H; y++ {
				if other, ok := taken[[2]int{x, y}]; ok {
					t.Fatalf("panels %q and %q overlap at %d,%d", other, p.Title, x, y)
				}
				taken[[2]int{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q has an empty query", p.Title)
			}
		}
	}
}

// TestSystemdUnits: systemd-analyze verify accepts every unit (with the
// binary's path pointed at an executable that exists here) and says
// nothing about them.
func TestSystemdUnits(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian's systemd package)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	units, err := filepath.Glob("systemd/*.service")
	if err != nil || len(units) < 4 {
		t.Fatalf("units: %v %v", units, err)
	}
	dir := t.TempDir()
	var names []string
	for _, u := range units {
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(u)
		if strings.HasSuffix(name, "@.service") { // a template: verify an instance
			name = strings.TrimSuffix(name, "@.service") + "@osmosis-1.service"
		}
		b = bytes.ReplaceAll(b, []byte("/usr/local/bin/chainlens"), []byte(self))
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	cmd := exec.Command(analyze, append([]string{"verify"}, names...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_LEVEL=notice")
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", strings.Join(names, " "), err, out)
	}
}
