package synthosmosis

import "testing"

// BenchmarkGenerate generates mainnet-profile heights past the pools'
// creation; json-bytes/height is the JSON served per height (block and
// results).
func BenchmarkGenerate(b *testing.B) {
	c, err := New(Mainnet(1, 1))
	if err != nil {
		b.Fatal(err)
	}
	for h := int64(1); h <= 1_000; h++ {
		if _, err := c.Block(h); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	size := 0
	for i := range b.N {
		blk, err := c.Block(1_001 + int64(i))
		if err != nil {
			b.Fatal(err)
		}
		size += len(blk.Block) + len(blk.Results)
	}
	b.ReportMetric(float64(size)/float64(b.N), "json-bytes/height")
}
