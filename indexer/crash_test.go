package indexer_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

const childEnv = "CHAINLENS_INDEXER_CHILD"

// runChild is the indexer process that the crash test kills: it indexes
// the chain described by its environment through the given height.
func runChild() int {
	ctx := context.Background()
	until, _ := strconv.ParseInt(os.Getenv("CHILD_UNTIL"), 10, 64)
	db, err := store.Open(ctx, os.Getenv("CHILD_DB"), 4)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg := config.Chain{ID: os.Getenv("CHILD_CHAIN"), Kind: "dydx", RPC: []string{os.Getenv("CHILD_RPC")}, BatchSize: 3, Concurrency: 3,
		PollInterval: config.Duration(20 * time.Millisecond), Bech32Prefix: "dydx"}
	client, _ := cometbft.New(cfg.RPC, cometbft.Retry{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond}, nil)
	m, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	if err := x.Run(ctx, until); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestCrashAtRandomMomentsLosesAndDuplicatesNothing SIGKILLs an indexer
// process at random moments during a backfill of the recorded dYdX localnet,
// restarts it, and checks every height against the node.
func TestCrashAtRandomMomentsLosesAndDuplicatesNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills an indexer process 20 times")
	}
	_, dbURL := testdb.New(t)
	rec, err := replaynode.Load(filepath.Join("..", "testdata", "localnet", "dydx"))
	if err != nil {
		t.Fatal(err)
	}
	srv := replayServer(t, "dydx")
	until := rec.LastHeight()
	env := append(os.Environ(), childEnv+"=1", "CHILD_DB="+dbURL, "CHILD_RPC="+srv.URL, "CHILD_CHAIN="+rec.ChainID(),
		"CHILD_UNTIL="+strconv.FormatInt(until, 10))

	db, err := store.Open(context.Background(), dbURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(7, 11))
	kills := 0
	for kills < 20 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			// Finished before the kill: start over from an empty state would
			// lose the point, so shorten the next delays instead.
			if err != nil {
				t.Fatalf("child failed: %v: %s", err, stderr.String())
			}
			t.Logf("child finished after %d kills; resetting checkpoint to continue killing", kills)
			if _, err := db.ExecContext(context.Background(), "UPDATE sync_state SET next_height = next_height / 2 WHERE chain_id = ?", rec.ChainID()); err != nil {
				t.Fatal(err)
			}
			continue
		case <-time.After(time.Duration(30+rng.IntN(250)) * time.Millisecond):
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		kills++
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}

	// No gap, no duplicate: every height once, with the node's tx count.
	type row struct {
		Height int64 `bun:"height"`
		NumTxs int   `bun:"num_txs"`
		Txs    int   `bun:"txs"`
	}
	var rows []row
	if err := db.NewRaw(`SELECT b.height, b.num_txs, (SELECT count(*) FROM txs t WHERE t.chain_id = b.chain_id AND t.height = b.height) AS txs
		FROM blocks b WHERE b.chain_id = ? ORDER BY b.height`, rec.ChainID()).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	if int64(len(rows)) != until {
		t.Fatalf("%d heights indexed, want %d", len(rows), until)
	}
	for i, r := range rows {
		want, _ := rec.BlockTxCount(int64(i + 1))
		if r.Height != int64(i+1) || r.NumTxs != want || r.Txs != want {
			t.Fatalf("height %d: num_txs %d, tx rows %d; want height %d with %d", r.Height, r.NumTxs, r.Txs, i+1, want)
		}
	}
	if n := count(t, db, "SELECT count(*) FROM dead_letters"); n != 0 {
		t.Fatalf("%d dead letters", n)
	}
	t.Logf("killed the indexer %d times; %d heights exact", kills, len(rows))
}
