package indexer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
)

// syntheticHeight builds a /block and a /block_results result of about
// sizeMB megabytes (an Osmosis epoch block is >100 MB): txs of random
// bytes, each with transfer events of realistic attribute sizes.
func syntheticHeight(chainID string, height int64, sizeMB int) chains.RawBlock {
	const eventsPerTx = 20
	var res bytes.Buffer
	res.WriteString(`{"height":"` + fmt.Sprint(height) + `","txs_results":[`)
	var txs []string
	for i := 0; res.Len() < sizeMB<<20; i++ {
		if i > 0 {
			res.WriteByte(',')
		}
		txs = append(txs, base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("not-a-cosmos-tx-%08d", i))))
		res.WriteString(`{"code":0,"data":"","log":"","info":"","gas_wanted":"200000","gas_used":"150000","events":[`)
		for e := range eventsPerTx {
			if e > 0 {
				res.WriteByte(',')
			}
			fmt.Fprintf(&res, `{"type":"transfer","attributes":[{"key":"recipient","value":"osmo1%038d","index":true},{"key":"sender","value":"osmo1%038d","index":true},{"key":"amount","value":"%d000uosmo,%dibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2","index":true},{"key":"msg_index","value":"0","index":true}]}`, i, e, i+e, e+1)
		}
		res.WriteString(`],"codespace":""}`)
	}
	res.WriteString(`],"finalize_block_events":[],"validator_updates":[],"consensus_param_updates":null,"app_hash":""}`)
	txJSON, _ := json.Marshal(txs)
	block := fmt.Sprintf(`{"block_id":{"hash":"%064X","parts":{"total":1,"hash":""}},"block":{"header":{"chain_id":%q,"height":"%d","time":"2026-11-21T00:00:00Z","app_hash":"","proposer_address":"AA"},"data":{"txs":%s}}}`,
		height, chainID, height, txJSON)
	return chains.RawBlock{ChainID: chainID, Height: height, Block: json.RawMessage(block), Results: res.Bytes()}
}

// BenchmarkHugeBlockResults indexes one height whose block_results is about
// 100 MB through the pipeline and reports the peak heap in use (sampled)
// and the process's peak RSS.
func BenchmarkHugeBlockResults(b *testing.B) {
	ctx := context.Background()
	db, _ := testdb.New(b)
	raw := syntheticHeight("huge-1", 1, 100)
	b.ReportMetric(float64(len(raw.Results))/(1<<20), "block_results_MB")
	adapter := cosmos.NewAdapter("osmosis", "osmo")
	m, _ := NewMetrics(nil)
	cfg := config.Chain{ID: "huge-1", Kind: "osmosis", RPC: []string{"http://memory"}, BatchSize: 100, Concurrency: 4,
		PollInterval: config.Duration(time.Millisecond), Bech32Prefix: "osmo"}
	debug.FreeOSMemory()
	var peak uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	for b.Loop() {
		truncateAll(b, db)
		x := NewCosmos(cfg, db, memSource{"huge-1", []chains.RawBlock{raw}}, adapter, slog.New(slog.DiscardHandler), m)
		if err := x.Run(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
	close(done)
	var events int64
	_ = db.NewRaw("SELECT count(*) FROM events WHERE chain_id = 'huge-1'").Scan(ctx, &events)
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(peak)/(1<<20), "peak_heap_MB")
	b.ReportMetric(maxRSSMB(), "maxRSS_MB")
}
