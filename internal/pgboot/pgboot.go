// Package pgboot is the Go-side anchor of scripts/db.sh, the PostgreSQL
// bootstrap behind `make run` and `make test`.
//
// `scripts/db.sh ensure [DBNAME]` prints one postgres URL: $DATABASE_URL if
// set, else a database on a trust-auth server at 127.0.0.1:5432, else a
// private loopback-only cluster it creates and starts under
// $CHAINLENS_PG_DIR on port $CHAINLENS_PG_PORT. `scripts/db.sh stop` stops
// that private cluster. The package tests exercise the private-cluster path
// so it cannot rot.
package pgboot

import (
	"os"
	"path/filepath"
)

// ScriptPath returns the absolute path of scripts/db.sh in the enclosing
// module, found by walking up from the working directory to the nearest
// directory holding go.mod. It returns "" when the working directory is
// unknown or no go.mod is found; it does not check that the script exists.
func ScriptPath() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "db.sh")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
