package cosmos

import (
	"testing"
	"time"
)

// BenchmarkDecodeOsmosisLocalnet decodes the 299 recorded Osmosis heights
// from memory and reports events (block-level and tx) decoded per second.
func BenchmarkDecodeOsmosisLocalnet(b *testing.B) {
	ln := loadLocalnet(b, "osmosis", "localosmosis", "osmo")
	opt := ln.opts()
	events := 0
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for h := int64(1); h <= int64(len(ln.blocks)); h++ {
			blk, err := DecodeBlock(ln.raw(h), opt)
			if err != nil {
				b.Fatal(err)
			}
			events += len(blk.Events)
			for _, tx := range blk.Txs {
				events += len(tx.Events)
			}
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(events)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(len(ln.blocks)*b.N)/elapsed.Seconds(), "heights/s")
}
