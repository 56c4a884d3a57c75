// Command chainlens-dev runs the chains chainlens is developed and tested
// against, on loopback: recorded localnets and EVM devnets served as
// CometBFT or Ethereum JSON-RPC nodes (replay-node), and a live in-process
// cosmos-sdk chain with steady traffic (devnet). `make run` starts them;
// they are not part of the production binary.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/chainlens/chainlens/devchain/devnet"
	"github.com/chainlens/chainlens/devchain/evmreplay"
	"github.com/chainlens/chainlens/devchain/protosets"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/devchain/synthdydx"
	"github.com/chainlens/chainlens/devchain/synthevm"
	"github.com/chainlens/chainlens/devchain/synthosmosis"
	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := &cobra.Command{
		Use:           "chainlens-dev",
		Short:         "Local chains for developing and testing chainlens",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newDevnetCmd(), newReplayNodeCmd(), newSynthNodeCmd(), newProtosetsCmd())
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "chainlens-dev:", err)
		os.Exit(1)
	}
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
			return serveCometBFT(cmd.Context(), rec, rec.ChainID(), listen, replaynode.Options{BlockTime: blockTime, StartHeight: startHeight})
		},
	}
	cmd.Flags().StringVar(&dir, "data", "", "recording folder")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:26657", "listen address (loopback)")
	cmd.Flags().DurationVar(&blockTime, "block-time", 0, "reveal one height per this duration (0: all heights at once)")
	cmd.Flags().Int64Var(&startHeight, "start-height", 0, "height revealed at start when --block-time is set")
	cmd.Flags().BoolVar(&rebase, "rebase-time", false, "EVM: move block times so the start height is now")
	return cmd
}

func newSynthNodeCmd() *cobra.Command {
	var (
		profile, listen string
		days            int
		seed            uint64
		blockTime       time.Duration
		startHeight     int64
		printConfig     bool
		latestStores    bool
		end             string
	)
	cmd := &cobra.Command{
		Use:   "synth-node",
		Short: "Serve a generated, mainnet-shaped chain of --days days (deterministic for --seed)",
		Long: "Generates a chain with a busy mainnet's block time and traffic in the wire form of the recorded data and serves\n" +
			"it (profile evm: Ethereum JSON-RPC, devchain/synthevm; profile dydx: a dYdX v4 CometBFT node, devchain/synthdydx;\n" +
			"profile osmosis: an Osmosis CometBFT node with balancer, stableswap and concentrated pools, devchain/synthosmosis;\n" +
			"each package says what its profile assumes). The last height is at\n" +
			"--end-time (default now; give the same one to serve the same chain again). With --block-time it reveals one\n" +
			"height per block time from --start-height.\n" +
			"--print-config writes the chain's `chains:` entry and its `stablecoins` tokens for a chainlens config, and exits.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if profile != "evm" && profile != "dydx" && profile != "osmosis" {
				return fmt.Errorf("--profile %q: the profiles are: evm, dydx, osmosis", profile)
			}
			if days < 1 || days > 3650 {
				return fmt.Errorf("--days must be between 1 and 3650")
			}
			if blockTime < 0 || startHeight < 0 {
				return fmt.Errorf("--block-time and --start-height must not be negative")
			}
			if latestStores && profile != "osmosis" {
				return fmt.Errorf("--latest-store-reads: only the osmosis profile answers store reads")
			}
			endTime := time.Now()
			if end != "" {
				t, err := time.Parse(time.RFC3339, end)
				if err != nil {
					return fmt.Errorf("--end-time: %w", err)
				}
				endTime = t
			}
			if profile == "dydx" {
				p := synthdydx.Mainnet(days, seed)
				p.EndAt(endTime)
				if printConfig {
					fmt.Fprint(cmd.OutOrStdout(), synthdydx.Config(p, "http://"+listen))
					return nil
				}
				c, err := synthdydx.New(p)
				if err != nil {
					return err
				}
				if startHeight == 0 {
					startHeight = c.LastHeight()
				}
				return serveCometBFT(cmd.Context(), c, p.ChainID, listen, replaynode.Options{StartHeight: startHeight, BlockTime: blockTime})
			}
			if profile == "osmosis" {
				p := synthosmosis.Mainnet(days, seed)
				p.EndAt(endTime)
				if printConfig {
					fmt.Fprint(cmd.OutOrStdout(), synthosmosis.Config(p, "http://"+listen))
					return nil
				}
				c, err := synthosmosis.New(p)
				if err != nil {
					return err
				}
				if startHeight == 0 {
					startHeight = c.LastHeight()
				}
				return serveCometBFT(cmd.Context(), c, p.ChainID, listen, replaynode.Options{StartHeight: startHeight, BlockTime: blockTime,
					LatestStoreReads: latestStores})
			}
			p := synthevm.Ethereum(days, seed)
			p.EndAt(endTime)
			if printConfig {
				fmt.Fprint(cmd.OutOrStdout(), synthevm.Config(p, "http://"+listen))
				return nil
			}
			return serveEVM(cmd.Context(), synthevm.New(p), listen, evmreplay.Options{StartHeight: startHeight, BlockTime: blockTime})
		},
	}
	cmd.Flags().StringVar(&profile, "profile", "evm", "chain profile: evm, dydx, osmosis")
	cmd.Flags().IntVar(&days, "days", 1, "days of history")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "generator seed (same seed, same chain)")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8545", "listen address (loopback)")
	cmd.Flags().DurationVar(&blockTime, "block-time", 0, "reveal one height per this duration (0: every height at once)")
	cmd.Flags().Int64Var(&startHeight, "start-height", 0, "height revealed at start (0: the last)")
	cmd.Flags().BoolVar(&printConfig, "print-config", false, "print the chainlens config entries of the chain and exit")
	cmd.Flags().BoolVar(&latestStores, "latest-store-reads", false, "osmosis: answer store subspace reads from the revealed height's state whatever the height asked, as cosmos-sdk <= 0.53 nodes (real Osmosis nodes) do")
	cmd.Flags().StringVar(&end, "end-time", "", "the last height's time, RFC 3339 (default now)")
	return cmd
}

// serveCometBFT serves a CometBFT chain (recorded or generated) until ctx
// ends.
func serveCometBFT(ctx context.Context, src replaynode.Source, chainID, listen string, opt replaynode.Options) error {
	node := replaynode.New(src, opt)
	return serveNode(ctx, listen, node.Handler(), node.Run, func(addr string) {
		slog.New(slog.NewTextHandler(os.Stderr, nil)).Info("cometbft node serving", "chain", chainID,
			"heights", fmt.Sprintf("%d..%d", src.FirstHeight(), src.LastHeight()), "tip", node.Height(),
			"addr", addr, "block_time", opt.BlockTime)
	})
}

// serveEVMReplay serves an EVM recording until ctx ends.
func serveEVMReplay(ctx context.Context, dir, listen string, opt evmreplay.Options) error {
	rec, err := evmreplay.Load(dir)
	if err != nil {
		return err
	}
	return serveEVM(ctx, rec, listen, opt)
}

// serveEVM serves an EVM chain (recorded or generated) until ctx ends.
func serveEVM(ctx context.Context, rec evmreplay.Source, listen string, opt evmreplay.Options) error {
	node := evmreplay.New(rec, opt)
	return serveNode(ctx, listen, node.Handler(), node.Run, func(addr string) {
		slog.New(slog.NewTextHandler(os.Stderr, nil)).Info("evm node serving", "blocks", fmt.Sprintf("0..%d", rec.LastHeight()),
			"head", node.Head(), "addr", addr, "block_time", opt.BlockTime, "rebase", opt.Rebase)
	})
}

// serveNode listens on listen, says where (started), runs the node's clock
// (run) and serves h until ctx ends.
func serveNode(ctx context.Context, listen string, h http.Handler, run func(context.Context) error, started func(addr string)) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	started("http://" + ln.Addr().String())
	go func() { _ = run(ctx) }()
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

func newProtosetsCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "protosets",
		Short: "Rebuild the protobuf descriptor sets shipped in chains/protoset/sets from their pinned Go modules",
		Long: "Reads <dir>/sets.json (each set: Go modules at pinned versions), downloads each module with the go command,\n" +
			"extracts the file descriptors its generated .pb.go files embed and writes <dir>/<set>.binpb.gz; module hashes\n" +
			"are pinned in sets.json by the first build and checked by every later one. Needs the module proxy (network).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return protosets.Build(cmd.Context(), dir, func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "chains/protoset/sets", "folder of sets.json and the built sets")
	return cmd
}
