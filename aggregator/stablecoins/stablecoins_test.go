package stablecoins_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/stablecoins"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/evmreplay"
	"github.com/chainlens/chainlens/indexer"
	evmindexer "github.com/chainlens/chainlens/indexer/evm"
	"github.com/chainlens/chainlens/internal/evmtest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestLateStartHeight: a chain indexed from a start height far above the
// job's step starts its reports at the first indexed block (it used to
// look for a block below the start and fail every run).
func TestLateStartHeight(t *testing.T) {
	db, ch, ctx := indexRecording(t, 150)
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, stablecoins.Flows{Chain: ch, MaxBlocks: 50})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 { // 149 → 199 → 249 → 299 → 311
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var height int64
	if err := db.NewRaw("SELECT height FROM stablecoin_report_state WHERE chain_id = ?", ch.ID).Scan(ctx, &height); err != nil {
		t.Fatal(err)
	}
	if height != evmtest.LastHeight {
		t.Errorf("reports reached %d, want %d", height, evmtest.LastHeight)
	}
}

// TestSendersPerBucketAcrossRuns: the distinct senders the job keeps per
// bucket of every size are those of the bucket's minutes, counted whole,
// however many runs the minutes arrived in (runs of 7 blocks split
// minutes and buckets between runs).
func TestSendersPerBucketAcrossRuns(t *testing.T) {
	db, ch, ctx := indexRecording(t, 0)
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, stablecoins.Flows{Chain: ch, MaxBlocks: 7})
	if err != nil {
		t.Fatal(err)
	}
	for range evmtest.LastHeight/7 + 2 {
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var buckets, differ int
	if err := db.NewRaw(`WITH whole AS (
			SELECT m.chain_id, a.s AS agg_s, date_bin(make_interval(secs => a.s), m.minute, timestamptz '1970-01-01 00:00:00+00') AS bucket,
				m.token, count(DISTINCT m.sender) AS senders
			FROM stablecoin_senders_minute m CROSS JOIN unnest(ARRAY[60, 120, 300, 600, 1800, 3600]) AS a(s) GROUP BY 1, 2, 3, 4)
		SELECT (SELECT count(*) FROM stablecoin_senders_bucket),
			(SELECT count(*) FROM (SELECT * FROM whole EXCEPT SELECT * FROM stablecoin_senders_bucket
				UNION ALL (SELECT * FROM stablecoin_senders_bucket EXCEPT SELECT * FROM whole)) d)`).Scan(ctx, &buckets, &differ); err != nil {
		t.Fatal(err)
	}
	if buckets < 20 || differ != 0 {
		t.Fatalf("%d buckets kept, %d differ from the minutes counted whole", buckets, differ)
	}
}

// indexRecording indexes the EVM recording from startHeight (0: its
// first block) into a fresh database through the real indexer.
func indexRecording(t *testing.T, startHeight int64) (*bun.DB, config.Chain, context.Context) {
	t.Helper()
	url := evmtest.Start(t, evmreplay.Options{})
	db, _ := testdb.New(t)
	ch := evmtest.Chain(url)
	ch.Confirmations, ch.StartHeight = 0, startHeight
	client, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	m, _ := indexer.NewMetrics(nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	if err := evmindexer.New(ch, db, []*ethclient.Client{client}, slog.New(slog.DiscardHandler), m).Run(ctx, evmtest.LastHeight); err != nil {
		t.Fatal(err)
	}
	return db, ch, ctx
}
