package main

import (
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/config"
)

// jobs lists the aggregator jobs of every built report family.
func jobs(cfg *config.Config) []aggregator.Job {
	_ = cfg
	return nil
}

// indexerParts wires one indexer per configured chain.
func indexerParts(cfg *config.Config, log *slog.Logger, db *bun.DB, reg *prometheus.Registry) ([]part, error) {
	_, _, _ = log, db, reg
	if len(cfg.Chains) == 0 {
		return nil, nil
	}
	return nil, errors.New("the indexer is not built yet")
}
