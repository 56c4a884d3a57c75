package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/opstatus"
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
			session, closeSession, err := openSession(ctx, cfg, db)
			if err != nil {
				return err
			}
			defer closeSession()
			parts, err := apiParts(ctx, cfg, log, db, session, reg)
			if err != nil {
				return err
			}
			sched, err := aggregator.New(db, cfg.Aggregator, log, reg, app.Jobs(cfg)...)
			if err != nil {
				return err
			}
			sched.Retain(cfg.Chains)
			parts = append(parts, part{"aggregator", sched.Run})
			idx, err := indexerParts(cfg, log, db, reg, indexing{session: session})
			if err != nil {
				return err
			}
			parts = append(parts, idx...)
			return runAll(ctx, log, parts...)
		},
	}
}

func newAggregateCmd(g *globals) *cobra.Command {
	var (
		once bool
		jobs []string
	)
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
			sched.Retain(cfg.Chains)
			if len(jobs) > 0 && !once {
				return fmt.Errorf("--job runs jobs once: use it with --once")
			}
			if once && len(jobs) > 0 {
				if err := sched.RunOnly(cmd.Context(), jobs...); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ran %d job(s): %s\n", len(jobs), strings.Join(jobs, ", "))
				return nil
			}
			if once {
				if err := sched.RunOnce(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ran %d job(s): %s\n", len(sched.Jobs()), strings.Join(sched.Jobs(), ", "))
				return nil
			}
			return runAll(cmd.Context(), log, append([]part{{"aggregator", sched.Run}, historyPart(cfg, log, db, reg)}, metricsPart(cfg, log, db, reg)...)...)
		}),
	}
	cmd.Flags().BoolVar(&once, "once", false, "run every job once, then exit")
	cmd.Flags().StringSliceVar(&jobs, "job", nil, "with --once: run only these jobs (repeat or comma-separate; the jobs they follow are not run)")
	return cmd
}

func newIndexCmd(g *globals) *cobra.Command {
	var (
		until, from, to int64
		msgType, chain  string
		reset, redecode bool
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
			if redecode {
				if until > 0 || from > 0 || to > 0 || msgType != "" {
					return fmt.Errorf("--redecode takes only --chain")
				}
				cfg, log, db, err := g.setupIndexing(cmd.Context())
				if err != nil {
					return err
				}
				defer db.Close()
				return redecodeChains(cmd.Context(), cfg, log, db, chain, cmd.OutOrStdout())
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
			session, closeSession, err := openSession(cmd.Context(), cfg, db)
			if err != nil {
				return err
			}
			defer closeSession()
			if reindex {
				return reindexChains(cmd.Context(), cfg, log, db, session, chain, from, to, msgType)
			}
			reg := newRegistry()
			parts, err := indexerParts(cfg, log, db, reg, indexing{until: until, giveUpAfter: giveUp, only: chain, session: session})
			if err != nil {
				return err
			}
			if len(parts) == 0 {
				return fmt.Errorf("no chains configured in %s", g.configPath)
			}
			if until > 0 {
				return runUntilDone(cmd.Context(), log, true, parts...)
			}
			return runAll(cmd.Context(), log, append(append(parts, historyPart(cfg, log, db, reg)), metricsPart(cfg, log, db, reg)...)...)
		},
	}
	cmd.Flags().Int64Var(&until, "until", 0, "index through this height, then exit 0")
	cmd.Flags().Int64Var(&from, "from", 0, "reindex from this height (with --to)")
	cmd.Flags().Int64Var(&to, "to", 0, "reindex through this height (with --from)")
	cmd.Flags().StringVar(&msgType, "msg-type", "", "reindex the heights holding a message of this type URL")
	cmd.Flags().StringVar(&chain, "chain", "", "only this chain id (required by --from/--to with several cosmos chains, and by --reset)")
	cmd.Flags().DurationVar(&giveUp, "give-up-after", 2*time.Minute, "with --until: fail when a chain's node stays unreachable this long")
	cmd.Flags().BoolVar(&reset, "reset", false, "delete everything indexed for --chain, so indexing starts over")
	cmd.Flags().BoolVar(&redecode, "redecode", false, "decode the stored messages kept raw with the shipped and stored node descriptors (no block is fetched again)")
	return cmd
}

func newStatusCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the database, migrations, per-chain indexing state and the aggregator jobs",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			st, err := opstatus.Gather(cmd.Context(), e.cfg, e.db, opstatus.Options{Messages: true})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			return printStatus(out, st)
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON (what the console shows)")
	return cmd
}

// printStatus writes a status as tables.
func printStatus(out io.Writer, st *opstatus.Status) error {
	fmt.Fprintf(out, "database: reachable\nmigrations: %d known, %d pending\n\n", st.Migrations, st.Pending)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CHAIN\tKIND\tINDEXED\tCONTIGUOUS\tNODE TIP\tLAG\tLAST BLOCK TIME\tGENESIS\tSNAPSHOT\tDEAD LETTERS")
	for _, c := range st.Chains {
		if !c.Started {
			fmt.Fprintf(w, "%s\t%s\tnot started\t-\t-\t-\t-\t-\t-\t-\n", c.ID, c.Kind)
			continue
		}
		dl := "0"
		if len(c.DeadLetters) > 0 {
			hs := make([]int64, len(c.DeadLetters))
			for i, d := range c.DeadLetters {
				hs[i] = d.Height
			}
			dl = fmt.Sprintf("%d (%s; last error: %s)", len(hs), heightRanges(hs), c.DeadLetters[0].LastError)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", c.ID, c.Kind, c.Indexed, c.Contiguous, c.NodeTip, c.Lag,
			c.LastBlockTime.Format(time.RFC3339), c.Opening, c.Snapshots, dl)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	header := false
	for _, c := range st.Chains {
		if c.Retention == nil {
			continue
		}
		if !header {
			fmt.Fprintln(out, "\nretention:")
			header = true
		}
		kept := "raw rows of every indexed height"
		if c.Retention.PrunedBelow > 0 {
			kept = fmt.Sprintf("raw rows from height %d (below dropped)", c.Retention.PrunedBelow)
		}
		fmt.Fprintf(out, "  %s: keeps %s; %s\n", c.ID, c.Retention.Setting, kept)
	}
	if err := printMessageCoverage(out, st); err != nil {
		return err
	}
	return printJobs(out, st)
}

// printJobs writes the aggregator jobs: watermark, the height their rows
// are built through against the chain's tip, and the last run.
func printJobs(out io.Writer, st *opstatus.Status) error {
	if len(st.Jobs) == 0 {
		return nil
	}
	fmt.Fprintln(out, "\njobs:")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "JOB\tCHAIN\tHEIGHT\tTIP\tLAST RUN\tDURATION\tROWS\tLAST ERROR")
	for _, j := range st.Jobs {
		chain, height, tip, last := "-", "-", "-", "never"
		if j.Chain != "" {
			chain, height, tip = j.Chain, strconv.FormatInt(j.Height, 10), strconv.FormatInt(j.Tip, 10)
		}
		if !j.LastRun.IsZero() {
			last = j.LastRun.Format(time.RFC3339)
		}
		errText := "-"
		if j.LastError != "" {
			errText = j.LastError
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%dms\t%d\t%s\n", j.Name, chain, height, tip, last, j.DurationMS, j.Rows, errText)
	}
	return w.Flush()
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

// printMessageCoverage writes, per cosmos chain, the share of its stored
// messages decoded, the types kept raw, and the node descriptors stored.
func printMessageCoverage(out io.Writer, st *opstatus.Status) error {
	fmt.Fprintln(out, "\nmessages:")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CHAIN\tSTORED\tDECODED\tKEPT RAW (type: undecoded/partial)\tNODE DESCRIPTORS")
	for _, ch := range st.Chains {
		c := ch.Messages
		if c == nil {
			continue
		}
		raw := "none"
		if len(c.KeptRaw) > 0 {
			parts := make([]string, 0, min(len(c.KeptRaw), 10))
			for _, t := range c.KeptRaw[:min(len(c.KeptRaw), 10)] {
				parts = append(parts, fmt.Sprintf("%s: %d/%d", t.TypeURL, t.Undecoded, t.Partial))
			}
			if len(c.KeptRaw) > 10 {
				parts = append(parts, fmt.Sprintf("and %d more types", len(c.KeptRaw)-10))
			}
			raw = strings.Join(parts, ", ")
		}
		nd := "none (shipped sets only)"
		if len(c.Descriptors) > 0 {
			parts := make([]string, len(c.Descriptors))
			for i, v := range c.Descriptors {
				parts[i] = fmt.Sprintf("%s (from height %d, %d files)", v.AppVersion, v.FirstHeight, v.Files)
			}
			nd = strings.Join(parts, ", ")
		}
		fmt.Fprintf(w, "%s\t%d\t%.2f%%\t%s\t%s\n", ch.ID, c.Stored, 100*c.Decoded, raw, nd)
	}
	return w.Flush()
}

func newMessagesCmd(g *globals) *cobra.Command {
	var (
		address, chain string
		limit          int
	)
	cmd := &cobra.Command{
		Use:   "messages",
		Short: "List the newest indexed messages that involve an account (any bech32 prefix, or 0x)",
		Long: "Lists the messages whose tx the account signed, or whose body or events name it, newest first, on every\n" +
			"cosmos chain (or --chain): an account is its address bytes, so osmo1…, cosmos1… and osmovaloper1… of one key match.",
		Args: cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			if address == "" {
				return fmt.Errorf("--address is required")
			}
			if limit <= 0 || limit > 10_000 {
				return fmt.Errorf("--limit must be between 1 and 10000")
			}
			if chain != "" {
				if _, ok := e.cfg.Chain(chain); !ok {
					return fmt.Errorf("--chain %q: no such chain", chain)
				}
			}
			refs, err := indexer.MessagesTouching(cmd.Context(), e.db, chain, address, limit)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "CHAIN\tHEIGHT\tTX\tMSG\tTYPE")
			for _, r := range refs {
				fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%s\n", r.ChainID, r.Height, r.TxHash, r.MsgIndex, r.TypeURL)
			}
			return w.Flush()
		}),
	}
	cmd.Flags().StringVar(&address, "address", "", "the account: bech32 (any prefix) or 0x")
	cmd.Flags().StringVar(&chain, "chain", "", "only this chain id")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many messages")
	return cmd
}
