package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"github.com/spf13/cobra"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/store"
)

// globals are the flags every subcommand shares.
type globals struct {
	configPath string
	cpuProfile string
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "chainlens",
		Short:         "Self-hostable blockchain analytics and engagement service",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.configPath, "config", "config/local.yaml", "path to the YAML configuration")
	root.PersistentFlags().StringVar(&g.cpuProfile, "cpuprofile", "", "write a CPU profile of the command to this file (go tool pprof)")
	var stopProfile func()
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if g.cpuProfile == "" {
			return nil
		}
		f, err := os.Create(g.cpuProfile)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
			return fmt.Errorf("cpu profile: %w", err)
		}
		stopProfile = func() { pprof.StopCPUProfile(); _ = f.Close() }
		return nil
	}
	root.PersistentPostRun = func(*cobra.Command, []string) {
		if stopProfile != nil {
			stopProfile()
		}
	}
	root.AddCommand(
		newRunCmd(g),
		newIndexCmd(g),
		newAggregateCmd(g),
		newServeCmd(g),
		newMigrateCmd(g),
		newKeysCmd(g),
		newCampaignsCmd(g),
		newBenchCmd(g),
		newStatusCmd(g),
		newMessagesCmd(g),
		newPruneCmd(g),
		newVersionCmd(),
	)
	return root
}

// loadConfig reads the configuration named by --config with environment overrides.
func (g *globals) loadConfig() (*config.Config, error) {
	return config.Load(g.configPath, os.Getenv)
}

// setup loads the config, builds the logger and opens the database.
func (g *globals) setup(ctx context.Context) (*config.Config, *slog.Logger, *bun.DB, error) {
	return g.open(ctx, false)
}

// setupIndexing is setup for a process that indexes the configured chains.
func (g *globals) setupIndexing(ctx context.Context) (*config.Config, *slog.Logger, *bun.DB, error) {
	cfg, log, db, err := g.open(ctx, true)
	if err != nil {
		return nil, nil, nil, err
	}
	// A chain's raw filter may drop rows a report is built from: say which.
	for _, s := range aggregator.Starved(app.Jobs(cfg), cfg.Chains) {
		log.Warn("a raw filter starves a report", "job", s)
	}
	return cfg, log, db, nil
}

// poolSize is a process's database pool: max_conns for its work, plus,
// when it indexes, one connection per chain, which holds the chain's
// indexing lock for the whole run (without them, as many chains as
// max_conns would take every connection and wait for ever).
func poolSize(cfg *config.Config, indexes bool) int {
	if !indexes {
		return cfg.Database.MaxConns
	}
	return cfg.Database.MaxConns + len(cfg.Chains)
}

func (g *globals) open(ctx context.Context, indexes bool) (*config.Config, *slog.Logger, *bun.DB, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, nil, nil, err
	}
	log := newLogger(cfg.Log, os.Stderr)
	db, err := store.Open(ctx, cfg.Database.URL, poolSize(cfg, indexes))
	if err != nil {
		return nil, nil, nil, err
	}
	return cfg, log, db, nil
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := "devel"
			if bi, ok := debug.ReadBuildInfo(); ok {
				if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
					v = bi.Main.Version
				}
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						v += " " + s.Value
					}
				}
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "chainlens", v)
			return err
		},
	}
}

// env is what a subcommand that uses the database gets.
type env struct {
	cfg *config.Config
	log *slog.Logger
	db  *bun.DB
}

// withDB wraps a subcommand's body: the configuration is loaded, the
// logger built and the database opened before it runs, and closed after.
func (g *globals) withDB(fn func(cmd *cobra.Command, args []string, e env) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cfg, log, db, err := g.setup(cmd.Context())
		if err != nil {
			return err
		}
		defer db.Close()
		return fn(cmd, args, env{cfg: cfg, log: log, db: db})
	}
}
