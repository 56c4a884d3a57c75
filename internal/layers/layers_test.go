// Package layers_test enforces the direction of the layers: chains (pure
// decoders) → indexer → store → aggregator → api, with report contracts
// (report/) and the engagement domain shared from below. What two layers
// share lives one layer down; a package never imports a layer above it or
// beside it. The check reads the real import graph (`go list -deps`), so a
// forbidden import through any chain of packages fails it.
package layers_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/chainlens/chainlens/"

// forbidden maps a layer (a path prefix in the module) to the layers its
// non-test code may not depend on, directly or not.
var forbidden = map[string][]string{
	"chains":     {"indexer", "aggregator", "api", "store", "report", "engagement", "internal", "cmd", "devchain"},
	"config":     {"indexer", "aggregator", "api", "store", "report", "engagement", "internal", "cmd", "devchain"},
	"store":      {"indexer", "aggregator", "api", "report", "engagement", "internal", "cmd", "devchain"},
	"indexer":    {"aggregator", "api", "report", "engagement", "internal", "cmd", "devchain"},
	"report":     {"indexer", "aggregator", "api", "engagement", "internal", "cmd", "devchain"},
	"engagement": {"indexer", "aggregator", "api", "internal", "cmd", "devchain"},
	"aggregator": {"indexer", "api", "internal", "cmd", "devchain"},
	"api":        {"indexer", "aggregator", "internal", "cmd", "devchain"},
}

// forbiddenForPackage are further rules for single packages: the
// production binary carries no local chain (replay nodes, the in-process
// devnet and the cosmos-sdk test network under it): chainlens-dev does.
var forbiddenForPackage = map[string][]string{
	"cmd/chainlens": {"devchain"},
}

// layer is the first path element of a package of the module ("" outside it).
func layer(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, module)
	if !ok {
		return ""
	}
	first, _, _ := strings.Cut(rest, "/")
	return first
}

func TestLayersPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, module+"...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, deps := f[0], f[1:]
		banned := slices.Concat(forbidden[layer(pkg)], forbiddenForPackage[strings.TrimPrefix(pkg, module)])
		if banned == nil {
			continue
		}
		checked++
		for _, d := range deps {
			if l := layer(d); l != "" && slices.Contains(banned, l) {
				t.Errorf("%s depends on %s: the %s layer may not reach the %s layer", strings.TrimPrefix(pkg, module), strings.TrimPrefix(d, module), layer(pkg), l)
			}
		}
	}
	if checked < 40 {
		t.Fatalf("only %d packages checked: is go list answering for the whole module?", checked)
	}
}

// TestLayerOf pins the layer names the rules above are keyed by.
func TestLayerOf(t *testing.T) {
	for pkg, want := range map[string]string{
		module + "api/dex":               "api",
		module + "report/dex":            "report",
		module + "chains/osmosis/clmath": "chains",
		module + "engagement":            "engagement",
		"github.com/uptrace/bun":         "",
	} {
		if got := layer(pkg); got != want {
			t.Errorf("layer(%s) = %q, want %q", pkg, got, want)
		}
	}
}
