package perp_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/dydx"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/devchain/synthdydx"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/indexer/snapshot"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/opstatus"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestPositionsFromALateStart: a dYdX chain indexed from a height long
// after genesis imports every subaccount's perpetual positions at the
// height before from the node (SubaccountAll, page by page); its positions
// report and the open interest from then on equal those of the same chain
// indexed from genesis. The node serves no bank state, which the import
// says and goes on without; a node that stops serving the height in the
// middle of the import leaves nothing staged and nothing imported.
func TestPositionsFromALateStart(t *testing.T) {
	t.Parallel()
	const start, last = 300, 600
	profile := synthdydx.Mainnet(1, 5)
	profile.Traders, profile.Makers, profile.LiquidationsPerMille, profile.LiquidationsFrom = 3_000, 12, 60, 100
	// index indexes the chain from height from to last; state, when set,
	// stands for the node's state queries instead of the node itself (and
	// no job runs).
	index := func(from int64, state func(snapshot.BankState) indexer.BankState, log *slog.Logger) (*bun.DB, *config.Config) {
		t.Helper()
		c, err := synthdydx.New(profile)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(replaynode.New(c, replaynode.Options{StartHeight: last}).Handler())
		t.Cleanup(srv.Close)
		cfg := config.Chain{ID: profile.ChainID, Kind: dydx.Kind, BatchSize: 50, Concurrency: 4, Bech32Prefix: "dydx",
			RPC: []string{srv.URL}, StartHeight: from}
		client, err := cometbft.New(cfg.RPC, cometbft.Retry{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		db, _ := testdb.New(t)
		m, _ := indexer.NewMetrics(nil)
		x := indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), dydx.NewAdapter("dydx"), log, m)
		bank := snapshot.BankState{Q: client, PageSize: 7} // many pages
		x.State = bank
		if state != nil {
			x.State = state(bank)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := x.Run(ctx, last); err != nil {
			t.Fatal(err)
		}
		all := &config.Config{Chains: []config.Chain{cfg}}
		if state == nil {
			apitest.RunJobs(t, db, all)
		}
		return db, all
	}
	quiet := slog.New(slog.DiscardHandler)
	whole, _ := index(1, nil, quiet)
	late, lateCfg := index(start, nil, quiet)
	ctx := t.Context()

	var imported struct {
		Height    int64 `bun:"height"`
		Rows      int64 `bun:"rows"`
		Positions int64 `bun:"positions"`
		Bank      int64 `bun:"bank"`
	}
	if err := late.NewRaw(`SELECT height, rows, (SELECT count(*) FROM dydx_opening_positions) AS positions,
			(SELECT count(*) FROM genesis_imports) + (SELECT count(*) FROM state_imports WHERE part <> ?) AS bank
		FROM state_imports WHERE part = ?`, dydx.PathSubaccountAll, dydx.PathSubaccountAll).Scan(ctx, &imported); err != nil {
		t.Fatal(err)
	}
	if imported.Height != start-1 || imported.Rows < 20 || imported.Rows != imported.Positions || imported.Bank != 0 {
		t.Fatalf("import %+v; want SubaccountAll at %d with its positions (20 or more), and no bank state", imported, start-1)
	}

	st, err := opstatus.Gather(ctx, lateCfg, late, opstatus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Chains[0].Opening, fmt.Sprintf("state at %d imported without balances (balances before the first indexed height unknown); also %s %d rows",
		start-1, dydx.PathSubaccountAll, imported.Rows); got != want {
		t.Errorf("status: opening state %q, want %q", got, want)
	}

	read := func(db *bun.DB, q string) []string {
		t.Helper()
		var out []string
		if err := db.NewRaw(q).Scan(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	const positionsQ = `SELECT concat_ws(' ', address, subaccount_number, perpetual_id, size) FROM perp_positions WHERE size <> 0 ORDER BY 1`
	wantPositions, gotPositions := read(whole, positionsQ), read(late, positionsQ)
	if len(wantPositions) < 20 || !slices.Equal(gotPositions, wantPositions) {
		t.Errorf("positions after a late start (%d)\n%v\nwant (%d)\n%v", len(gotPositions), gotPositions, len(wantPositions), wantPositions)
	}
	// Open interest from the hour of the first indexed block on.
	var from time.Time
	if err := late.NewRaw("SELECT date_trunc('hour', time, 'UTC') FROM blocks WHERE height = ?", start).Scan(ctx, &from); err != nil {
		t.Fatal(err)
	}
	oiQ := `SELECT concat_ws(' ', perpetual_id, hour, open_interest) FROM perp_open_interest_hourly WHERE hour >= '` +
		from.UTC().Format(time.RFC3339) + `' ORDER BY 1`
	wantOI, gotOI := read(whole, oiQ), read(late, oiQ)
	if len(wantOI) == 0 || !slices.Equal(gotOI, wantOI) {
		t.Errorf("open interest after a late start\n%v\nwant\n%v", gotOI, wantOI)
	}

	// A node that stops serving the height before the start in the middle
	// of the import (pruned meanwhile): the pages staged so far go, nothing
	// is recorded as imported, and indexing goes on.
	var logs strings.Builder
	pruned, _ := index(start, func(b snapshot.BankState) indexer.BankState { return &prunedMidImport{BankState: b} },
		slog.New(slog.NewTextHandler(&logs, nil)))
	var staged, opening, recorded, next int64
	if err := pruned.NewRaw(`SELECT (SELECT count(*) FROM state_import_progress), (SELECT count(*) FROM dydx_opening_positions),
			(SELECT count(*) FROM state_imports), (SELECT next_height FROM sync_state)`).Scan(ctx, &staged, &opening, &recorded, &next); err != nil {
		t.Fatal(err)
	}
	if staged != 0 || opening != 0 || recorded != 0 || next != last+1 {
		t.Errorf("after a node pruned mid-import: %d staged pages, %d opening positions, %d imports recorded, next height %d; want none and %d",
			staged, opening, recorded, next, last+1)
	}
	if want := "the node serves no chain state at the height before the first indexed one"; !strings.Contains(logs.String(), want) ||
		!strings.Contains(logs.String(), fmt.Sprintf("height=%d", start-1)) || !strings.Contains(logs.String(), "pruned meanwhile") {
		t.Errorf("the log does not say what is unavailable:\n%s", logs.String())
	}
}

// prunedMidImport serves the first two pages of the opening queries, then
// answers as a node that pruned the height meanwhile.
type prunedMidImport struct {
	snapshot.BankState
	pages int
}

func (p *prunedMidImport) OpeningPage(ctx context.Context, height int64, q chains.OpeningQuery, req chains.OpeningRequest, key []byte) ([][]byte, []byte, error) {
	if p.pages++; p.pages > 2 {
		return nil, nil, fmt.Errorf("%w: pruned meanwhile", indexer.ErrStateUnavailable)
	}
	return p.BankState.OpeningPage(ctx, height, q, req, key)
}
