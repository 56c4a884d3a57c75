package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
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

// indexing says what an index process does.
type indexing struct {
	// until > 0 makes each indexer stop once it has committed that height.
	until int64
	// giveUpAfter, with until, fails an indexer whose node stays
	// unreachable for that long.
	giveUpAfter time.Duration
	// only, when set, is the one chain id to index.
	only string
	// session holds the chains' indexing locks (database.session_url); nil: db.
	session *bun.DB
}

// indexerParts wires one indexer per configured chain (or the one chain
// of o.only).
func indexerParts(cfg *config.Config, log *slog.Logger, db *bun.DB, reg *prometheus.Registry, o indexing) ([]part, error) {
	m, err := indexer.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	until := o.until
	if o.only != "" {
		if _, ok := cfg.Chain(o.only); !ok {
			return nil, fmt.Errorf("--chain %q: no such chain in the config", o.only)
		}
	}
	var parts []part
	for _, ch := range cfg.Chains {
		if o.only != "" && ch.ID != o.only {
			continue
		}
		var run func(ctx context.Context) error
		var closeClients func()
		if ch.IsEVM() {
			clients, err := evm.Dial(ch.RPC)
			if err != nil {
				return nil, fmt.Errorf("chain %s: %w", ch.ID, err)
			}
			closeClients = func() { evm.CloseAll(clients) }
			x := evm.New(ch, db, clients, log, m)
			x.SessionDB = o.session
			if until > 0 {
				x.GiveUpAfter = o.giveUpAfter
			}
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
			if reg != nil {
				if err := indexer.RegisterEndpointHealth(reg, ch.ID, client.Health); err != nil {
					return nil, fmt.Errorf("chain %s: %w", ch.ID, err)
				}
			}
			x := indexer.NewCosmos(ch, db, indexer.NewClientSource(client), adapter, log, m)
			x.SessionDB = o.session
			x.State = snapshot.BankState{Q: client}
			if until > 0 {
				x.GiveUpAfter = o.giveUpAfter
			}
			run = func(ctx context.Context) error { return x.Run(ctx, until) }
			if ch.SnapshotEvery > 0 {
				snap := snapshot.NewSnapshotter(db, client, ch, log)
				if st, ok := adapter.(chains.StateAdapter); ok {
					snap.State = st
				}
				if hub, ok := cfg.FirstChain("cosmoshub"); ok && hub.ID == ch.ID {
					for _, accounts := range cfg.Staking.Providers {
						snap.Delegators = append(snap.Delegators, accounts...)
					}
				}
				if until > 0 {
					// A backfill snapshots every height it indexes that the
					// node serves state for, and finishes them before exiting.
					indexed := make(chan error, 1)
					index := run
					run = func(ctx context.Context) error {
						err := index(ctx)
						indexed <- err
						return err
					}
					parts = append(parts, part{"snapshots " + ch.ID, func(ctx context.Context) error { return snap.RunBackfill(ctx, indexed) }})
				} else {
					parts = append(parts, part{"snapshots " + ch.ID, supervise(log.With("chain", ch.ID, "component", "snapshots"), snap.Run)})
				}
			}
		}
		if until == 0 {
			run = supervise(log.With("chain", ch.ID), run)
		}
		if closeClients != nil {
			inner := run
			run = func(ctx context.Context) error {
				defer closeClients()
				return inner(ctx)
			}
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
// chains (or of one chain): a height range (of one chain), or the heights
// holding a message type.
func reindexChains(ctx context.Context, cfg *config.Config, log *slog.Logger, db, session *bun.DB, only string, from, to int64, msgType string) error {
	m, err := indexer.NewMetrics(nil)
	if err != nil {
		return err
	}
	var targets []config.Chain
	if only != "" {
		ch, ok := cfg.Chain(only)
		if !ok {
			return fmt.Errorf("--chain %q: no such chain in the config", only)
		}
		if ch.IsEVM() {
			return fmt.Errorf("--chain %s is an EVM chain: reindexing is for cosmos chains (an EVM chain rewinds itself on reorgs; to start over, use --reset)", only)
		}
		targets = append(targets, ch)
	} else {
		var ids []string
		for _, ch := range cfg.Chains {
			if ch.IsEVM() {
				log.Info("reindex: skipping an EVM chain", "chain", ch.ID)
				continue
			}
			targets = append(targets, ch)
			ids = append(ids, ch.ID)
		}
		if len(targets) == 0 {
			return fmt.Errorf("no cosmos chain in the config to reindex")
		}
		if msgType == "" && len(targets) > 1 {
			return fmt.Errorf("--from/--to are heights of one chain: add --chain (one of %s)", strings.Join(ids, ", "))
		}
	}
	for _, ch := range targets {
		adapter, err := kinds.Adapter(ch)
		if err != nil {
			return err
		}
		client, err := cometbft.New(ch.RPC, cometbft.Retry{}, log.With("chain", ch.ID))
		if err != nil {
			return err
		}
		x := indexer.NewCosmos(ch, db, indexer.NewClientSource(client), adapter, log, m)
		x.SessionDB = session
		if msgType != "" {
			heights, err := x.HeightsWithMessage(ctx, msgType)
			if err != nil {
				return err
			}
			if err := x.Reindex(ctx, heights); err != nil {
				return err
			}
			log.Info("reindex done", "chain", ch.ID, "heights", len(heights))
			continue
		}
		// The whole range must be indexed before any of it is rewritten;
		// it is then rewritten a slice at a time (never listed whole).
		cp, err := indexer.LoadCheckpoint(ctx, db, ch.ID)
		if errors.Is(err, indexer.ErrNoCheckpoint) {
			return fmt.Errorf("reindex %s: nothing is indexed yet", ch.ID)
		}
		if err != nil {
			return err
		}
		if to >= cp.NextHeight {
			return fmt.Errorf("reindex %s: height %d is not indexed yet (indexed through %d)", ch.ID, to, cp.NextHeight-1)
		}
		const slice = 10_000
		for a := from; a <= to; a += slice {
			hs := make([]int64, 0, min(slice, to-a+1))
			for h := a; h <= min(to, a+slice-1); h++ {
				hs = append(hs, h)
			}
			if err := x.Reindex(ctx, hs); err != nil {
				if a > from {
					return fmt.Errorf("heights %d..%d of %s were rewritten before: %w", from, a-1, ch.ID, err)
				}
				return err
			}
		}
		log.Info("reindex done", "chain", ch.ID, "heights", to-from+1)
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
		if !ch.IsEVM() {
			adapter, err := kinds.Adapter(ch)
			if err != nil {
				return err
			}
			domain = adapter.Tables()
			if oa, ok := adapter.(chains.OpeningStateAdapter); ok {
				domain = append(domain, oa.OpeningTables()...)
			}
		}
		if err := indexer.ResetChain(ctx, db, chainID, domain); err != nil {
			return err
		}
		_, err := fmt.Fprintf(out, "reset %s: nothing indexed any more\n", chainID)
		return err
	}
	return fmt.Errorf("--chain %q: no such chain in the config", chainID)
}

// redecodeChains runs indexer.Redecode on every cosmos chain (or the one
// named) and prints what it did.
func redecodeChains(ctx context.Context, cfg *config.Config, log *slog.Logger, db *bun.DB, only string, out io.Writer) error {
	found := false
	for _, ch := range cfg.Chains {
		if ch.IsEVM() || (only != "" && ch.ID != only) {
			continue
		}
		found = true
		adapter, err := kinds.Adapter(ch)
		if err != nil {
			return err
		}
		da, ok := adapter.(chains.DescriptorAdapter)
		if !ok {
			fmt.Fprintf(out, "%s: kind %s does not decode messages from descriptors\n", ch.ID, ch.Kind)
			continue
		}
		res, err := indexer.Redecode(ctx, db, ch.ID, da, log)
		if err != nil {
			return err
		}
		still := 0
		for _, n := range res.StillRaw {
			still += n
		}
		fmt.Fprintf(out, "%s: %d messages decoded, %d completed, %d still kept raw\n", ch.ID, res.Decoded, res.Completed, still)
	}
	if !found {
		if only != "" {
			return fmt.Errorf("--chain %q: no such cosmos chain", only)
		}
		return fmt.Errorf("no cosmos chain in the config")
	}
	return nil
}
