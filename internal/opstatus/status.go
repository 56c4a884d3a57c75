// Package opstatus gathers what an operator asks about a running
// deployment: the migrations, each chain's indexing state (checkpoint,
// node tip, dead letters, opening state, snapshots, retention, message
// coverage) and each aggregator job's state. `chainlens status` prints it
// and the console (/console) shows it: one code path, so the two always
// agree.
package opstatus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/store"
	"github.com/chainlens/chainlens/store/descriptors"
	"github.com/chainlens/chainlens/store/snapshots"
)

// Status is the state of a deployment, read from its database.
type Status struct {
	Migrations int     `json:"migrations"`
	Pending    int     `json:"pending_migrations"`
	Chains     []Chain `json:"chains"`
	Jobs       []Job   `json:"jobs"`
}

// Chain is one configured chain's indexing state.
type Chain struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Started is false before the chain's first commit; the fields below
	// are then zero.
	Started bool `json:"started"`
	// Indexed is the checkpoint (every height below it committed or a
	// dead letter); Contiguous the height through which every height is
	// indexed.
	Indexed       int64     `json:"indexed"`
	Contiguous    int64     `json:"contiguous"`
	NodeTip       int64     `json:"node_tip"`
	Lag           int64     `json:"lag"`
	LastBlockTime time.Time `json:"last_block_time"`
	// Opening says whether balances are complete: the genesis imported,
	// the node's state before the first indexed height, or none ("-" for
	// an EVM chain, whose balances come from transfers).
	Opening     string       `json:"opening_state"`
	Snapshots   string       `json:"snapshots"`
	DeadLetters []DeadLetter `json:"dead_letters"`
	// Retention is nil for a chain that keeps every raw row and never
	// dropped any.
	Retention *Retention `json:"retention,omitempty"`
	// Messages is filled by Gather with Options.Messages (it counts the
	// chain's stored messages).
	Messages *Messages `json:"messages,omitempty"`
}

// DeadLetter is a height that keeps failing.
type DeadLetter struct {
	Height      int64     `json:"height"`
	Attempts    int       `json:"attempts"`
	LastError   string    `json:"last_error"`
	NextRetryAt time.Time `json:"next_retry_at"`
}

// Retention is a chain's raw-data retention.
type Retention struct {
	Setting string `json:"setting"` // "the last 1000 heights or the last 720h0m0s"
	// PrunedBelow is the lowest height whose raw rows are kept (0: none dropped).
	PrunedBelow int64 `json:"pruned_below"`
}

// Messages is a cosmos chain's message coverage.
type Messages struct {
	Stored      int64                 `json:"stored"`
	Decoded     float64               `json:"decoded"` // share, 0..1
	KeptRaw     []indexer.TypeCount   `json:"kept_raw"`
	Descriptors []descriptors.Version `json:"descriptors"`
}

// Job is one aggregator job's state.
type Job struct {
	Name      string `json:"name"`
	Version   string `json:"version,omitempty"`
	Watermark int64  `json:"watermark"`
	// Chain and Height: the chain the job's answers are about and the
	// height its rows are built through (freshness); Tip is that chain's
	// node tip as the indexer last saw it.
	Chain     string    `json:"chain,omitempty"`
	Height    int64     `json:"height"`
	BlockTime time.Time `json:"block_time,omitzero"`
	Tip       int64     `json:"tip"`
	LastRun   time.Time `json:"last_run,omitzero"`
	// DurationMS and Rows are the last run's; LastError is the last
	// failure, empty once a run succeeds.
	DurationMS int64  `json:"duration_ms"`
	Rows       int64  `json:"rows"`
	LastError  string `json:"last_error,omitempty"`
}

// Options says what to gather beyond the cheap parts.
type Options struct {
	// Messages counts each cosmos chain's stored messages (a scan of an
	// index: seconds on a large chain).
	Messages bool
}

// Gather reads the status of every configured chain and job.
func Gather(ctx context.Context, cfg *config.Config, db *bun.DB, o Options) (*Status, error) {
	ms, err := store.Migrations(ctx, db)
	if err != nil {
		return nil, err
	}
	st := &Status{Migrations: len(ms), Chains: []Chain{}, Jobs: []Job{}}
	for _, m := range ms {
		if !m.Applied {
			st.Pending++
		}
	}
	tips := map[string]int64{}
	for _, ch := range cfg.Chains {
		c, err := gatherChain(ctx, db, ch, o)
		if err != nil {
			return nil, err
		}
		tips[ch.ID] = c.NodeTip
		st.Chains = append(st.Chains, c)
	}
	if st.Jobs, err = gatherJobs(ctx, db, tips); err != nil {
		return nil, err
	}
	return st, nil
}

func gatherChain(ctx context.Context, db bun.IDB, ch config.Chain, o Options) (Chain, error) {
	c := Chain{ID: ch.ID, Kind: ch.Kind, DeadLetters: []DeadLetter{}}
	cp, err := indexer.LoadCheckpoint(ctx, db, ch.ID)
	switch {
	case errors.Is(err, indexer.ErrNoCheckpoint):
		return c, nil
	case err != nil:
		return c, err
	}
	c.Started = true
	c.Indexed, c.NodeTip, c.LastBlockTime = cp.NextHeight-1, cp.TipHeight, cp.LastTime.UTC()
	c.Lag = max(0, c.NodeTip-c.Indexed)
	dls, err := indexer.DeadLetters(ctx, db, ch.ID, false)
	if err != nil {
		return c, err
	}
	c.Contiguous = c.Indexed
	for _, d := range dls {
		c.DeadLetters = append(c.DeadLetters, DeadLetter{Height: d.Height, Attempts: d.Attempts, LastError: d.LastError, NextRetryAt: d.NextRetryAt.UTC()})
	}
	if len(dls) > 0 {
		c.Contiguous = min(c.Contiguous, dls[0].Height-1)
	}
	if c.Opening, err = opening(ctx, db, ch); err != nil {
		return c, err
	}
	c.Snapshots = "off"
	if ch.SnapshotEvery > 0 {
		first, last, err := snapshots.Range(ctx, db, ch.ID)
		if err != nil {
			return c, err
		}
		c.Snapshots = fmt.Sprintf("every %d, none yet", ch.SnapshotEvery)
		if last > 0 {
			c.Snapshots = fmt.Sprintf("every %d, %d..%d", ch.SnapshotEvery, first, last)
		}
	}
	if ch.IsEVM() {
		return c, nil
	}
	if c.Retention, err = retention(ctx, db, ch); err != nil {
		return c, err
	}
	if o.Messages {
		cov, err := indexer.MessageCoverage(ctx, db, ch.ID)
		if err != nil {
			return c, err
		}
		vs, err := descriptors.Versions(ctx, db, ch.ID)
		if err != nil {
			return c, err
		}
		c.Messages = &Messages{Stored: cov.Messages, Decoded: cov.Decoded(), KeptRaw: cov.KeptRaw, Descriptors: vs}
	}
	return c, nil
}

// opening says whether a chain's balances are complete: they are only
// from a genesis import or a state import.
func opening(ctx context.Context, db bun.IDB, ch config.Chain) (string, error) {
	if ch.IsEVM() {
		return "-", nil
	}
	imp, ok, err := indexer.GenesisImport(ctx, db, ch.ID)
	if err != nil {
		return "", err
	}
	parts, err := indexer.StateImports(ctx, db, ch.ID)
	if err != nil {
		return "", err
	}
	// The parts besides the balances (delegations, a chain kind's own
	// state) imported at a later start.
	var others []string
	for _, p := range parts {
		if p.Part != "bank" {
			others = append(others, fmt.Sprintf("%s %d rows", p.Part, p.Rows))
		}
	}
	also := ""
	if len(others) > 0 {
		also = "; also " + strings.Join(others, ", ")
	}
	switch {
	case !ok && len(parts) > 0:
		return fmt.Sprintf("state at %d imported without balances (balances before the first indexed height unknown)%s", parts[0].Height, also), nil
	case !ok:
		return "none (balances before the first indexed height unknown)", nil
	case imp.StateHeight > 0:
		return fmt.Sprintf("state at %d imported (%d balance rows)%s", imp.StateHeight, imp.BalanceRows, also), nil
	default:
		return fmt.Sprintf("imported (height %d, %d balance rows)", imp.InitialHeight, imp.BalanceRows), nil
	}
}

func retention(ctx context.Context, db bun.IDB, ch config.Chain) (*Retention, error) {
	pruned, err := store.PrunedBelow(ctx, db, ch.ID)
	if err != nil {
		return nil, err
	}
	if ch.Retention == nil && pruned == 0 {
		return nil, nil
	}
	setting := "none (keeps everything from now on)"
	if r := ch.Retention; r != nil {
		setting = ""
		if r.KeepHeights > 0 {
			setting = fmt.Sprintf("the last %d heights", r.KeepHeights)
		}
		if r.KeepFor > 0 {
			if setting != "" {
				setting += " or "
			}
			setting += "the last " + r.KeepFor.D().String()
		}
	}
	return &Retention{Setting: setting, PrunedBelow: pruned}, nil
}

func gatherJobs(ctx context.Context, db bun.IDB, tips map[string]int64) ([]Job, error) {
	var rows []struct {
		Name       string    `bun:"name"`
		Version    string    `bun:"version"`
		Watermark  int64     `bun:"watermark"`
		Chain      string    `bun:"chain_id"`
		Height     int64     `bun:"height"`
		BlockTime  time.Time `bun:"block_time"`
		LastRun    time.Time `bun:"last_run_at"`
		DurationMS int64     `bun:"last_duration_ms"`
		Rows       int64     `bun:"last_rows"`
		LastError  string    `bun:"last_error"`
	}
	err := db.NewRaw(`SELECT name, coalesce(version, '') AS version, watermark, coalesce(chain_id, '') AS chain_id,
		coalesce(height, 0) AS height, coalesce(block_time, 'epoch') AS block_time, coalesce(last_run_at, 'epoch') AS last_run_at,
		coalesce(last_duration_ms, 0) AS last_duration_ms, coalesce(last_rows, 0) AS last_rows, coalesce(last_error, '') AS last_error
		FROM aggregator_jobs ORDER BY name`).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("aggregator jobs: %w", err)
	}
	out := make([]Job, 0, len(rows))
	for _, r := range rows {
		j := Job{Name: r.Name, Version: r.Version, Watermark: r.Watermark, Chain: r.Chain, Height: r.Height,
			Tip: tips[r.Chain], DurationMS: r.DurationMS, Rows: r.Rows, LastError: r.LastError}
		if r.BlockTime.Unix() > 0 {
			j.BlockTime = r.BlockTime.UTC()
		}
		if r.LastRun.Unix() > 0 {
			j.LastRun = r.LastRun.UTC()
		}
		out = append(out, j)
	}
	return out, nil
}
