package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/app"
)

func newPruneCmd(g *globals) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Apply the chains' retention settings now: drop the raw partitions they no longer keep (a running aggregate does it every 10 minutes)",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			var retained []config.Chain
			for _, ch := range e.cfg.Chains {
				if ch.Retention != nil {
					retained = append(retained, ch)
				}
			}
			if len(retained) == 0 {
				return fmt.Errorf("no chain in %s has a retention setting (chains[].retention: {keep_heights: N} or {keep_for: 720h})", g.configPath)
			}
			done, err := aggregator.Retain(cmd.Context(), e.db, retained, app.Jobs(e.cfg), time.Now(), dryRun)
			out := cmd.OutOrStdout()
			for _, p := range done {
				verb := "dropped"
				parts := p.Dropped
				if dryRun {
					verb, parts = "would drop", p.Droppable
				}
				fmt.Fprintf(out, "%s: raw rows below height %d may go", p.ChainID, p.Bound)
				if p.HeldBy != "" {
					fmt.Fprintf(out, " (held there by job %s, which has not read further)", p.HeldBy)
				}
				fmt.Fprintf(out, "; %s %d partitions\n", verb, len(parts))
				for _, part := range parts {
					fmt.Fprintf(out, "  %s %s: heights %d..%d\n", verb, part.Table, part.From, part.To-1)
				}
			}
			return err
		}),
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only say what would be dropped")
	return cmd
}
