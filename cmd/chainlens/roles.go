package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/chainlens/chainlens/store/snapshots"

	"github.com/spf13/cobra"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/devchain/devnet"
	"github.com/chainlens/chainlens/devchain/evmreplay"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/store"
)

func newRunCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Run every role in one process: migrate, index, aggregate, serve",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, log, db, err := g.setupIndexing(ctx)
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
			sched, err := aggregator.New(db, cfg.Aggregator, log, reg, app.Jobs(cfg)...)
			if err != nil {
				return err
			}
			parts = append(parts, part{"aggregator", sched.Run})
			idx, err := indexerParts(cfg, log, db, reg, indexing{})
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
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			cfg, log, db := e.cfg, e.log, e.db
			reg := newRegistry()
			sched, err := aggregator.New(db, cfg.Aggregator, log, reg, app.Jobs(cfg)...)
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
			return runAll(cmd.Context(), log, append([]part{{"aggregator", sched.Run}}, metricsPart(cfg, log, db, reg)...)...)
		}),
	}
	cmd.Flags().BoolVar(&once, "once", false, "run every job once, then exit")
	return cmd
}

func newIndexCmd(g *globals) *cobra.Command {
	var (
		until, from, to int64
		msgType, chain  string
		reset           bool
		giveUp          time.Duration
	)
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Index every configured chain (through --until H, then exit); reindex with --from/--to or --msg-type",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if reset {
				if chain == "" || until > 0 || from > 0 || to > 0 || msgType != "" {
					return fmt.Errorf("--reset takes --chain ID and nothing else")
				}
				cfg, _, db, err := g.setup(cmd.Context())
				if err != nil {
					return err
				}
				defer db.Close()
				return resetChain(cmd.Context(), cfg, db, chain, cmd.OutOrStdout())
			}
			if until < 0 || from < 0 || to < 0 {
				return fmt.Errorf("--until, --from and --to must be positive heights")
			}
			if giveUp <= 0 {
				return fmt.Errorf("--give-up-after must be a positive duration")
			}
			reindex := from > 0 || to > 0 || msgType != ""
			if reindex && until > 0 {
				return fmt.Errorf("--until follows the chain; it does not combine with --from/--to or --msg-type")
			}
			if (from > 0) != (to > 0) || from > to {
				return fmt.Errorf("--from and --to go together, with --from <= --to")
			}
			if msgType != "" && from > 0 {
				return fmt.Errorf("use either --from/--to or --msg-type")
			}
			cfg, log, db, err := g.setupIndexing(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			if reindex {
				return reindexChains(cmd.Context(), cfg, log, db, chain, from, to, msgType)
			}
			reg := newRegistry()
			parts, err := indexerParts(cfg, log, db, reg, indexing{until: until, giveUpAfter: giveUp, only: chain})
			if err != nil {
				return err
			}
			if len(parts) == 0 {
				return fmt.Errorf("no chains configured in %s", g.configPath)
			}
			if until > 0 {
				return runUntilDone(cmd.Context(), log, true, parts...)
			}
			return runAll(cmd.Context(), log, append(parts, metricsPart(cfg, log, db, reg)...)...)
		},
	}
	cmd.Flags().Int64Var(&until, "until", 0, "index through this height, then exit 0")
	cmd.Flags().Int64Var(&from, "from", 0, "reindex from this height (with --to)")
	cmd.Flags().Int64Var(&to, "to", 0, "reindex through this height (with --from)")
	cmd.Flags().StringVar(&msgType, "msg-type", "", "reindex the heights holding a message of this type URL")
	cmd.Flags().StringVar(&chain, "chain", "", "only this chain id (required by --from/--to with several cosmos chains, and by --reset)")
	cmd.Flags().DurationVar(&giveUp, "give-up-after", 2*time.Minute, "with --until: fail when a chain's node stays unreachable this long")
	cmd.Flags().BoolVar(&reset, "reset", false, "delete everything indexed for --chain, so indexing starts over")
	return cmd
}

func newStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show the database, migrations and per-chain indexing state",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			cfg, db := e.cfg, e.db
			ctx := cmd.Context()
			ms, err := store.Migrations(ctx, db)
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
			fmt.Fprintf(out, "database: reachable\nmigrations: %d known, %d pending\n\n", len(ms), pending)
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "CHAIN\tKIND\tINDEXED\tCONTIGUOUS\tNODE TIP\tLAG\tLAST BLOCK TIME\tGENESIS\tSNAPSHOT\tDEAD LETTERS")
			for _, ch := range cfg.Chains {
				cp, err := indexer.LoadCheckpoint(ctx, db, ch.ID)
				if errors.Is(err, indexer.ErrNoCheckpoint) {
					fmt.Fprintf(w, "%s\t%s\tnot started\t-\t-\t-\t-\t-\t-\t-\n", ch.ID, ch.Kind)
					continue
				}
				if err != nil {
					return err
				}
				dls, err := indexer.DeadLetters(ctx, db, ch.ID, false)
				if err != nil {
					return err
				}
				// INDEXED is the checkpoint (every height below it committed or
				// a dead letter); CONTIGUOUS the height through which every
				// height is indexed.
				contiguous := cp.NextHeight - 1
				dl := "0"
				if len(dls) > 0 {
					hs := make([]int64, len(dls))
					for i, d := range dls {
						hs[i] = d.Height
					}
					contiguous = min(contiguous, hs[0]-1)
					dl = fmt.Sprintf("%d (%s; last error: %s)", len(dls), heightRanges(hs), dls[0].LastError)
				}
				// Balances are complete only from a genesis import.
				genesis := "-"
				if !ch.IsEVM() {
					initial, rows, ok, err := indexer.GenesisImport(ctx, db, ch.ID)
					if err != nil {
						return err
					}
					genesis = "none (balances before the first indexed height unknown)"
					if ok {
						genesis = fmt.Sprintf("imported (height %d, %d balance rows)", initial, rows)
					}
				}
				// State snapshots (and the dYdX catalog, which follows them).
				snap := "off"
				if ch.SnapshotEvery > 0 {
					last, err := snapshots.LastHeight(ctx, db, ch.ID)
					if err != nil {
						return err
					}
					snap = fmt.Sprintf("every %d, none yet", ch.SnapshotEvery)
					if last > 0 {
						snap = fmt.Sprintf("every %d, last at %d", ch.SnapshotEvery, last)
					}
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", ch.ID, ch.Kind, cp.NextHeight-1, contiguous, cp.TipHeight, max(0, cp.TipHeight-(cp.NextHeight-1)),
					cp.LastTime.UTC().Format(time.RFC3339), genesis, snap, dl)
			}
			return w.Flush()
		}),
	}
}

// heightRanges writes sorted heights as ranges: "7, 9-12, 40".
func heightRanges(hs []int64) string {
	var b strings.Builder
	for i := 0; i < len(hs); {
		j := i
		for j+1 < len(hs) && hs[j+1] == hs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j == i {
			fmt.Fprintf(&b, "%d", hs[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", hs[i], hs[j])
		}
		i = j + 1
	}
	return b.String()
}

func newDevnetCmd() *cobra.Command {
	var (
		listen, chainID  string
		blockTime, every time.Duration
	)
	cmd := &cobra.Command{
		Use:   "devnet",
		Short: "Run an in-process cosmos-sdk chain with steady traffic on loopback",
		Long: "Starts a single-validator cosmos-sdk chain (bank, staking, distribution) in this process, with its CometBFT RPC\n" +
			"on --listen, and sends steady traffic: bank sends between funded users, delegations and reward withdrawals.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if blockTime <= 0 || every <= 0 {
				return fmt.Errorf("--block-time and --traffic-every must be positive")
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
			ctx := cmd.Context()
			n, err := devnet.Start(ctx, devnet.Options{RPCListen: listen, ChainID: chainID, BlockTime: blockTime, Log: log.With("component", "devnet")})
			if err != nil {
				return err
			}
			log.Info("devnet running", "chain", n.ChainID(), "rpc", n.RPCURL(), "prefix", n.Bech32Prefix(), "traffic_every", every)
			trafficErr := n.RunTraffic(ctx, every)
			return errors.Join(trafficErr, n.Close())
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:26670", "CometBFT RPC listen address (loopback)")
	cmd.Flags().StringVar(&chainID, "chain-id", devnet.DefaultChainID, "chain id")
	cmd.Flags().DurationVar(&blockTime, "block-time", time.Second, "block time")
	cmd.Flags().DurationVar(&every, "traffic-every", 2*time.Second, "send one transaction this often")
	return cmd
}

func newReplayNodeCmd() *cobra.Command {
	var (
		dir, listen string
		blockTime   time.Duration
		startHeight int64
		rebase      bool
	)
	cmd := &cobra.Command{
		Use:   "replay-node",
		Short: "Serve recorded real chain data as a CometBFT or Ethereum JSON-RPC node",
		Long: "Serves a localnet recording (blocks.jsonl.gz, block_results.jsonl.gz, status.json, ...) as a CometBFT-compatible\n" +
			"JSON-RPC server, or an EVM recording (chain.json, blocks.jsonl.gz, logs.jsonl.gz) as an Ethereum JSON-RPC server.\n" +
			"With --block-time it reveals one height per block time from --start-height, so the chain looks live; --rebase-time\n" +
			"(EVM only) moves every block time so that the start height is now.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("--data is required (e.g. testdata/localnet/osmosis)")
			}
			if blockTime < 0 || startHeight < 0 {
				return fmt.Errorf("--block-time and --start-height must not be negative")
			}
			if _, err := os.Stat(filepath.Join(dir, "chain.json")); err == nil {
				return serveEVMReplay(cmd.Context(), dir, listen, evmreplay.Options{StartHeight: startHeight, BlockTime: blockTime, Rebase: rebase})
			}
			if rebase {
				return fmt.Errorf("--rebase-time is for EVM recordings (a folder with chain.json)")
			}
			rec, err := replaynode.Load(dir)
			if err != nil {
				return err
			}
			node := replaynode.New(rec, replaynode.Options{BlockTime: blockTime, StartHeight: startHeight})
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen: %w", err)
			}
			srv := &http.Server{Handler: node.Handler(), ReadHeaderTimeout: 5 * time.Second}
			log := slog.New(slog.NewTextHandler(os.Stderr, nil))
			log.Info("replay node serving", "chain", rec.ChainID(), "heights", fmt.Sprintf("%d..%d", rec.FirstHeight(), rec.LastHeight()),
				"addr", "http://"+ln.Addr().String(), "block_time", blockTime)
			ctx := cmd.Context()
			go func() { _ = node.Run(ctx) }()
			go func() {
				<-ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = srv.Shutdown(sctx)
			}()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "data", "", "recording folder")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:26657", "listen address (loopback)")
	cmd.Flags().DurationVar(&blockTime, "block-time", 0, "reveal one height per this duration (0: all heights at once)")
	cmd.Flags().Int64Var(&startHeight, "start-height", 0, "height revealed at start when --block-time is set")
	cmd.Flags().BoolVar(&rebase, "rebase-time", false, "EVM: move block times so the start height is now")
	return cmd
}

// serveEVMReplay serves an EVM recording until ctx ends.
func serveEVMReplay(ctx context.Context, dir, listen string, opt evmreplay.Options) error {
	rec, err := evmreplay.Load(dir)
	if err != nil {
		return err
	}
	node := evmreplay.New(rec, opt)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	srv := &http.Server{Handler: node.Handler(), ReadHeaderTimeout: 5 * time.Second}
	slog.New(slog.NewTextHandler(os.Stderr, nil)).Info("evm replay node serving", "blocks", fmt.Sprintf("0..%d", rec.LastHeight()),
		"head", node.Head(), "addr", "http://"+ln.Addr().String(), "block_time", opt.BlockTime, "rebase", opt.Rebase)
	go func() { _ = node.Run(ctx) }()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
