package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/kinds"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/indexer/evm"
	"github.com/chainlens/chainlens/indexer/snapshot"
)

// indexerParts wires one indexer per configured chain; until > 0 makes each
// stop once it has committed that height.
func indexerParts(cfg *config.Config, log *slog.Logger, db *bun.DB, reg *prometheus.Registry, until int64) ([]part, error) {
	m, err := indexer.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	var parts []part
	for _, ch := range cfg.Chains {
		var run func(ctx context.Context) error
		if ch.Kind == "evm" {
			clients, err := evm.Dial(ch.RPC)
			if err != nil {
				return nil, fmt.Errorf("chain %s: %w", ch.ID, err)
			}
			x := evm.New(ch, db, clients, log, m)
			run = func(ctx context.Context) error { return x.Run(ctx, until) }
		} else {
			adapter, err := kinds.Adapter(ch)
			if err != nil {
				return nil, err
			}
			client, err := cometbft.New(ch.RPC, cometbft.Retry{}, log.With("chain", ch.ID))
			if err != nil {
				return nil, err
			}
			x := indexer.NewCosmos(ch, db, indexer.NewClientSource(client), adapter, log, m)
			run = func(ctx context.Context) error { return x.Run(ctx, until) }
			if ch.SnapshotEvery > 0 && until == 0 {
				snap := snapshot.NewSnapshotter(db, client, ch, log)
				if st, ok := adapter.(chains.StateAdapter); ok {
					snap.State = st
				}
				if hub, ok := cfg.FirstChain("cosmoshub"); ok && hub.ID == ch.ID {
					for _, accounts := range cfg.Staking.Providers {
						snap.Delegators = append(snap.Delegators, accounts...)
					}
				}
				parts = append(parts, part{"snapshots " + ch.ID, supervise(log.With("chain", ch.ID, "component", "snapshots"), snap.Run)})
			}
		}
		if until == 0 {
			run = supervise(log.With("chain", ch.ID), run)
		}
		parts = append(parts, part{"indexer " + ch.ID, run})
	}
	return parts, nil
}

// supervise keeps a following indexer alive: a failure (a node down for
// long, a misconfigured chain) is logged and retried with growing backoff,
// instead of stopping the other chains and the API.
func supervise(log *slog.Logger, run func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		wait := time.Second
		for {
			start := time.Now()
			err := run(ctx)
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				return nil
			}
			if time.Since(start) > 5*time.Minute {
				wait = time.Second
			}
			log.Error("indexer stopped; restarting", "err", err, "in", wait)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			wait = min(wait*2, time.Minute)
		}
	}
}

// reindexChains rewrites already indexed heights of the configured cosmos
// chains (or of one chain): a height range, or the heights holding a
// message type.
func reindexChains(ctx context.Context, cfg *config.Config, log *slog.Logger, db *bun.DB, only string, from, to int64, msgType string) error {
	m, err := indexer.NewMetrics(nil)
	if err != nil {
		return err
	}
	found := false
	for _, ch := range cfg.Chains {
		if (only != "" && ch.ID != only) || ch.Kind == "evm" {
			continue
		}
		found = true
		adapter, err := kinds.Adapter(ch)
		if err != nil {
			return err
		}
		client, err := cometbft.New(ch.RPC, cometbft.Retry{}, log.With("chain", ch.ID))
		if err != nil {
			return err
		}
		x := indexer.NewCosmos(ch, db, indexer.NewClientSource(client), adapter, log, m)
		var heights []int64
		if msgType != "" {
			if heights, err = x.HeightsWithMessage(ctx, msgType); err != nil {
				return err
			}
		} else {
			for h := from; h <= to; h++ {
				heights = append(heights, h)
			}
		}
		if err := x.Reindex(ctx, heights); err != nil {
			return err
		}
		log.Info("reindex done", "chain", ch.ID, "heights", len(heights))
	}
	if !found {
		return fmt.Errorf("--chain %q: no such cosmos chain in the config", only)
	}
	return nil
}

// resetChain deletes what was indexed for one configured chain.
func resetChain(ctx context.Context, cfg *config.Config, db *bun.DB, chainID string, out io.Writer) error {
	for _, ch := range cfg.Chains {
		if ch.ID != chainID {
			continue
		}
		var domain []chains.Table
		if ch.Kind != "evm" {
			adapter, err := kinds.Adapter(ch)
			if err != nil {
				return err
			}
			domain = adapter.Tables()
		}
		if err := indexer.ResetChain(ctx, db, chainID, domain); err != nil {
			return err
		}
		_, err := fmt.Fprintf(out, "reset %s: nothing indexed any more\n", chainID)
		return err
	}
	return fmt.Errorf("--chain %q: no such chain in the config", chainID)
}
