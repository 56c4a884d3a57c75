package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/chainlens/chainlens/migrations"
)

// MigrationStatus describes one migration.
type MigrationStatus struct {
	Name    string
	Applied bool
	Group   int64
}

func newMigrator(db *bun.DB) (*migrate.Migrator, error) {
	ms, err := migrations.New()
	if err != nil {
		return nil, err
	}
	return migrate.NewMigrator(db, ms, migrate.WithMarkAppliedOnSuccess(true)), nil
}

// Migrate applies every pending migration under the migrator's lock and
// returns the names applied (none when the schema is current).
func Migrate(ctx context.Context, db *bun.DB) (applied []string, err error) {
	m, err := newMigrator(db)
	if err != nil {
		return nil, err
	}
	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("init migrations: %w", err)
	}
	if err := m.Lock(ctx); err != nil {
		return nil, fmt.Errorf("lock migrations: %w", err)
	}
	defer func() { err = errors.Join(err, m.Unlock(context.WithoutCancel(ctx))) }()
	group, err := m.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	for _, mg := range group.Migrations {
		applied = append(applied, mg.Name)
	}
	return applied, nil
}

// Rollback reverts the last applied group of migrations and returns the names reverted.
func Rollback(ctx context.Context, db *bun.DB) (reverted []string, err error) {
	m, err := newMigrator(db)
	if err != nil {
		return nil, err
	}
	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("init migrations: %w", err)
	}
	if err := m.Lock(ctx); err != nil {
		return nil, fmt.Errorf("lock migrations: %w", err)
	}
	defer func() { err = errors.Join(err, m.Unlock(context.WithoutCancel(ctx))) }()
	group, err := m.Rollback(ctx)
	if err != nil {
		return nil, fmt.Errorf("rollback: %w", err)
	}
	for _, mg := range group.Migrations {
		reverted = append(reverted, mg.Name)
	}
	return reverted, nil
}

// Migrations lists every known migration with whether it is applied.
func Migrations(ctx context.Context, db *bun.DB) ([]MigrationStatus, error) {
	m, err := newMigrator(db)
	if err != nil {
		return nil, err
	}
	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("init migrations: %w", err)
	}
	ms, err := m.MigrationsWithStatus(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	out := make([]MigrationStatus, len(ms))
	for i, mg := range ms {
		out[i] = MigrationStatus{Name: mg.Name, Applied: mg.IsApplied(), Group: mg.GroupID}
	}
	return out, nil
}

// SchemaCurrent reports whether every migration is applied; readiness uses it.
func SchemaCurrent(ctx context.Context, db *bun.DB) (bool, error) {
	ms, err := Migrations(ctx, db)
	if err != nil {
		return false, err
	}
	for _, m := range ms {
		if !m.Applied {
			return false, nil
		}
	}
	return true, nil
}
