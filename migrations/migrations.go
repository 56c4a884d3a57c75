// Package migrations holds the SQL schema of chainlens as timestamped,
// embedded migrations applied by bun/migrate. Schema changes happen here only.
package migrations

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/uptrace/bun/migrate"
)

//go:embed *.sql
var files embed.FS

// New returns the set of all migrations, discovered from the embedded files.
func New() (*migrate.Migrations, error) {
	m := migrate.NewMigrations()
	if err := m.Discover(files); err != nil {
		return nil, fmt.Errorf("discover migrations: %w", err)
	}
	return m, nil
}

// Fingerprint is a hash of every migration file (name and content): two
// databases migrated from the same fingerprint have the same schema.
func Fingerprint() (string, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return "", fmt.Errorf("list migrations: %w", err)
	}
	h := sha256.New()
	for _, e := range entries { // ReadDir sorts by name
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			return "", fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
