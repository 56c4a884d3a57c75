// Package migrations holds the SQL schema of chainlens as timestamped,
// embedded migrations applied by bun/migrate. Schema changes happen here only.
package migrations

import (
	"embed"
	"fmt"

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
