package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/internal/dexsynth"
	"github.com/chainlens/chainlens/internal/loadgen"
)

func newBenchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Benchmark helpers: synthetic history and a fixed-rate HTTP load"}

	var days, swaps int
	var seed uint64
	history := &cobra.Command{
		Use:   "dex-history",
		Short: "Write a synthetic hourly history (blocks, 10 balancer pools, swaps) of the configured osmosis chain into an empty database",
		Long: `Writes one block per hour for --days days ending now, 10 balancer pools over
uosmo, uusdc, uatom, uweth, uion and utia, and --swaps swaps per pool per hour
(a seeded price random walk), into the domain tables the indexer fills, then
sets the chain's checkpoint. Run "chainlens aggregate --once" afterwards: the
real aggregator jobs build the report tables from it. Refuses a chain that
already has indexed data.`,
		Args: cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			var chainID string
			for _, ch := range e.cfg.Chains {
				if ch.Kind == osmosis.Kind {
					chainID = ch.ID
					break
				}
			}
			if chainID == "" {
				return fmt.Errorf("bench dex-history: the config has no chain of kind osmosis")
			}
			if days < 1 || days > 3650 || swaps < 1 || swaps > 100 {
				return fmt.Errorf("bench dex-history: --days must be 1..3650 and --swaps 1..100")
			}
			start := time.Now()
			w, err := dexsynth.Generate(cmd.Context(), e.db, dexsynth.Options{ChainID: chainID, End: time.Now(), Hours: days * 24,
				Pools: dexsynth.DefaultPools(), SwapsPerHour: swaps, Seed: seed})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d blocks, %d pools, %d swaps of %s (heights 1..%d) in %s\n",
				w.Blocks, w.Pools, w.Swaps, chainID, w.LastHeight, time.Since(start).Round(time.Millisecond))
			return nil
		}),
	}
	history.Flags().IntVar(&days, "days", 365, "days of history")
	history.Flags().IntVar(&swaps, "swaps", 2, "swaps per pool per hour")
	history.Flags().Uint64Var(&seed, "seed", 1, "random seed")

	var (
		rate     int
		duration time.Duration
		headers  []string
		urlsFile string
	)
	httpCmd := &cobra.Command{
		Use:   "http",
		Short: "Send GET requests at a fixed rate and print latency percentiles per label",
		Long: `Reads "label URL" lines from --urls, sends GET requests to them round-robin at
--rate requests per second for --duration (open loop: latency counts from the
time a request was due), and prints count, errors, dropped, p50, p90, p99 and
max per label.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			targets, err := readTargets(urlsFile)
			if err != nil {
				return err
			}
			h := http.Header{}
			for _, kv := range headers {
				k, v, ok := strings.Cut(kv, ":")
				if !ok {
					return fmt.Errorf("--header %q: want Name: value", kv)
				}
				h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
			res, err := loadgen.Run(cmd.Context(), targets, loadgen.Options{Rate: rate, Duration: duration, Header: h})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LABEL\tCOUNT\tERRORS\tDROPPED\tP50\tP90\tP99\tMAX")
			ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
			failed := 0
			for _, r := range res {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", r.Label, r.Count, r.Errors, r.Dropped, ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max))
				failed += r.Errors + r.Dropped
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if failed > 0 {
				return fmt.Errorf("bench http: %d requests failed or were dropped", failed)
			}
			return nil
		},
	}
	httpCmd.Flags().IntVar(&rate, "rate", 500, "requests per second")
	httpCmd.Flags().DurationVar(&duration, "duration", 20*time.Second, "how long requests are started")
	httpCmd.Flags().StringArrayVar(&headers, "header", nil, "header sent with every request, e.g. 'Authorization: Bearer sk_...'")
	httpCmd.Flags().StringVar(&urlsFile, "urls", "", `file of "label URL" lines`)
	_ = httpCmd.MarkFlagRequired("urls")

	cmd.AddCommand(history, httpCmd)
	return cmd
}

func readTargets(path string) ([]loadgen.Target, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []loadgen.Target
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		label, u, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(strings.TrimSpace(u), "http") {
			return nil, fmt.Errorf("%s:%d: want \"label URL\", got %q", path, n, line)
		}
		out = append(out, loadgen.Target{Label: label, URL: strings.TrimSpace(u)})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no targets", path)
	}
	return out, nil
}
