package migrations

import (
	"io/fs"
	"strings"
	"testing"
)

// TestVersionsAreUnique: two migrations with the same version (the
// timestamp before the first '_') would be one to bun, which silently
// keeps one of them and marks the version applied.
func TestVersionsAreUnique(t *testing.T) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // version.direction → name
	for _, e := range entries {
		version, rest, ok := strings.Cut(e.Name(), "_")
		if !ok {
			t.Fatalf("%s: no version", e.Name())
		}
		dir := "up"
		if strings.HasSuffix(rest, ".down.sql") {
			dir = "down"
		}
		if prev, dup := names[version+"."+dir]; dup {
			t.Errorf("version %s is both %s and %s", version, prev, e.Name())
		}
		names[version+"."+dir] = e.Name()
	}
}
