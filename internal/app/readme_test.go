package app

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestReadmeMapsAreTheCode: the README's endpoint → report table maps
// (the tables under "| Endpoints | Report table |") are checked against
// the code they describe: every endpoint they name is an operation of the
// route table, every analytics operation is in one of them, every table
// they name exists (after the migrations), and every row names a table
// that a registered aggregator job builds (with config/local.yaml, which
// configures every chain kind), so a renamed table, job or endpoint
// fails here rather than leaving the map wrong.
func TestReadmeMapsAreTheCode(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("../../config/local.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	built := map[string]string{} // report table → job
	jobs := map[string]bool{}
	for _, j := range Jobs(cfg) {
		jobs[j.Name()] = true
		for _, table := range j.Tables().Owned {
			built[table] = j.Name()
		}
	}
	db, _ := testdb.New(t)
	var tables []string
	if err := db.NewRaw(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v') AND NOT c.relispartition`).Scan(context.Background(), &tables); err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, op := range route.Table() {
		paths[op.Path] = true
	}

	code := regexp.MustCompile("`([^`]+)`")
	mapped := map[string]bool{}
	rows := 0
	inMap := false
	for line := range strings.SplitSeq(string(readme), "\n") {
		switch {
		case strings.HasPrefix(line, "| Endpoints | Report table |"):
			inMap = true
			continue
		case !strings.HasPrefix(line, "|"):
			inMap = false
			continue
		case !inMap || strings.HasPrefix(line, "|---"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) < 2 {
			t.Errorf("README map row %q: want | endpoints | report tables |", line)
			continue
		}
		rows++
		for _, m := range code.FindAllStringSubmatch(cells[0], -1) {
			for _, p := range expandOptional(m[1]) {
				if !paths[p] {
					t.Errorf("README maps %s, which is no operation of the route table", p)
				}
				mapped[p] = true
			}
		}
		buildsOne := false
		for _, m := range code.FindAllStringSubmatch(strings.Join(cells[1:], " | "), -1) {
			name := m[1]
			if _, ok := built[name]; ok {
				buildsOne = true
			}
			if looksLikeTable(name) && !slices.Contains(tables, name) && !jobs[name] {
				t.Errorf("README row %q names %s: no table or job has that name", cells[0], name)
			}
		}
		if !buildsOne {
			t.Errorf("README row %q names no table a registered job builds", cells[0])
		}
	}
	if rows == 0 {
		t.Fatal("no README endpoint map found")
	}
	for _, op := range route.Table() {
		if op.Analytics() && !mapped[op.Path] {
			t.Errorf("%s is in no README endpoint map", op.Path)
		}
	}
}

// expandOptional expands a README path with an optional part in brackets
// (/a[/b]) into both paths, and a list of alternatives in braces
// (/total-{inflow,outflow}) into one path each; braces without a comma
// are a path parameter.
func expandOptional(p string) []string {
	if i, j := strings.Index(p, "["), strings.Index(p, "]"); i >= 0 && j > i {
		return slices.Concat(expandOptional(p[:i]+p[j+1:]), expandOptional(p[:i]+p[i+1:j]+p[j+1:]))
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '{' {
			continue
		}
		j := strings.Index(p[i:], "}") + i
		if j < i || !strings.Contains(p[i:j], ",") {
			continue
		}
		var out []string
		for alt := range strings.SplitSeq(p[i+1:j], ",") {
			out = append(out, expandOptional(p[:i]+alt+p[j+1:])...)
		}
		return out
	}
	return []string{p}
}

// looksLikeTable: a snake_case name with a domain prefix of the schema.
var looksLikeTable = regexp.MustCompile(`^(osmosis|dydx|perp|dex2|neutron|stablecoin|sa|liquid|ics|ibc|erc20|evm|earn)_[a-z0-9_]+$`).MatchString
