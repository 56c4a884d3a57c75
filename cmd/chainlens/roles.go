package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/store"
)

func newRunCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Run every role in one process: migrate, index, aggregate, serve",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, log, db, err := g.setup(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			applied, err := store.Migrate(ctx, db)
			if err != nil {
				return err
			}
			if len(applied) > 0 {
				log.Info("migrations applied", "names", applied)
			}
			reg := newRegistry()
			parts, err := apiParts(cfg, log, db, reg)
			if err != nil {
				return err
			}
			sched, err := aggregator.New(db, cfg.Aggregator, log, reg, jobs(cfg)...)
			if err != nil {
				return err
			}
			parts = append(parts, part{"aggregator", sched.Run})
			idx, err := indexerParts(cfg, log, db, reg)
			if err != nil {
				return err
			}
			parts = append(parts, idx...)
			return runAll(ctx, log, parts...)
		},
	}
}

func newAggregateCmd(g *globals) *cobra.Command {
	var once bool
	cmd := &cobra.Command{
		Use:   "aggregate",
		Short: "Run the aggregator jobs on their schedules (or every job once with --once)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, log, db, err := g.setup(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			reg := newRegistry()
			sched, err := aggregator.New(db, cfg.Aggregator, log, reg, jobs(cfg)...)
			if err != nil {
				return err
			}
			if once {
				if err := sched.RunOnce(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ran %d job(s): %s\n", len(sched.Jobs()), strings.Join(sched.Jobs(), ", "))
				return nil
			}
			return runAll(cmd.Context(), log, part{"aggregator", sched.Run})
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "run every job once, then exit")
	return cmd
}

func newIndexCmd(g *globals) *cobra.Command {
	var until int64
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Index every configured chain (through --until H, then exit)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, log, db, err := g.setup(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			_ = until
			parts, err := indexerParts(cfg, log, db, newRegistry())
			if err != nil {
				return err
			}
			return runAll(cmd.Context(), log, parts...)
		},
	}
	cmd.Flags().Int64Var(&until, "until", 0, "index through this height, then exit 0")
	return cmd
}

func newStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the database, migrations and per-chain indexing state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, db, err := g.setup(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			ms, err := store.Migrations(cmd.Context(), db)
			if err != nil {
				return err
			}
			pending := 0
			for _, m := range ms {
				if !m.Applied {
					pending++
				}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "database: reachable\nmigrations: %d known, %d pending\n", len(ms), pending)
			fmt.Fprintf(out, "chains configured: %d\n", len(cfg.Chains))
			return nil
		},
	}
}

func newDevnetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "devnet",
		Short: "Run an in-process cosmos-sdk chain with steady traffic on loopback",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("devnet is not built yet")
		},
	}
}

func newReplayNodeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "replay-node",
		Short: "Serve recorded real chain data as a CometBFT JSON-RPC node",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return errors.New("replay-node is not built yet")
		},
	}
}
