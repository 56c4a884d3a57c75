package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chainlens/chainlens/store"
)

func newMigrateCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply, revert or list database migrations",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "up",
		Short: "Apply every pending migration (a no-op when current)",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			db := e.db
			applied, err := store.Migrate(cmd.Context(), db)
			if err != nil {
				return err
			}
			if len(applied) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "schema is current")
			}
			for _, name := range applied {
				fmt.Fprintln(cmd.OutOrStdout(), "applied", name)
			}
			return nil
		}),
	}, newMigrateDownCmd(g), &cobra.Command{
		Use:   "status",
		Short: "List migrations and whether each is applied",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			db := e.db
			ms, err := store.Migrations(cmd.Context(), db)
			if err != nil {
				return err
			}
			for _, m := range ms {
				state := "pending"
				if m.Applied {
					state = fmt.Sprintf("applied (group %d)", m.Group)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", m.Name, state)
			}
			return nil
		}),
	})
	return cmd
}

// newMigrateDownCmd reverts the last applied group of migrations: it drops
// their tables and what they hold, so it asks for --yes after listing them.
func newMigrateDownCmd(g *globals) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Revert the last applied group of migrations (with --yes: their tables and data are dropped)",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			db := e.db
			if !yes {
				ms, err := store.Migrations(cmd.Context(), db)
				if err != nil {
					return err
				}
				var last int64
				var names []string
				for _, m := range ms {
					if m.Applied && m.Group > last {
						last, names = m.Group, nil
					}
					if m.Applied && m.Group == last {
						names = append(names, m.Name)
					}
				}
				if len(names) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "nothing to revert")
					return nil
				}
				return fmt.Errorf("migrate down would revert %d migration(s) of group %d (%s ... %s), dropping their tables and data; run it again with --yes",
					len(names), last, names[0], names[len(names)-1])
			}
			reverted, err := store.Rollback(cmd.Context(), db)
			if err != nil {
				return err
			}
			if len(reverted) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "nothing to revert")
			}
			for _, name := range reverted {
				fmt.Fprintln(cmd.OutOrStdout(), "reverted", name)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "revert, dropping the group's tables and data")
	return cmd
}
