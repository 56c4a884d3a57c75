package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// TestHeightBefore: the greatest height whose block time is before t, over
// indexed heights with gaps and blocks that share a time.
func TestHeightBefore(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	if err := store.EnsurePartitions(ctx, db, "c", []string{"blocks"}, 1, 2_000_000); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	// Heights 10..19 one second apart from t0; a gap; 1,000,050..1,000,052
	// at t0+100s (one time, three blocks); 1,999,999 at t0+200s.
	var heights []int64
	times := map[int64]time.Time{}
	for h := int64(10); h < 20; h++ {
		heights, times[h] = append(heights, h), at(int(h-10))
	}
	for h := int64(1_000_050); h <= 1_000_052; h++ {
		heights, times[h] = append(heights, h), at(100)
	}
	heights, times[1_999_999] = append(heights, 1_999_999), at(200)
	for _, h := range heights {
		if _, err := db.ExecContext(ctx, `INSERT INTO blocks VALUES ('c', ?, 'h', ?, 'p', 'x', 0)`, h, times[h]); err != nil {
			t.Fatal(err)
		}
	}
	// Another chain's blocks, all before t0 and above every height of c, are
	// never probed.
	if err := store.EnsurePartitions(ctx, db, "other", []string{"blocks"}, 3_000_000, 3_000_000); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO blocks VALUES ('other', 3000000, 'h', ?, 'p', 'x', 0)`, at(-50)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		t    time.Time
		want int64
	}{
		{"before every block", at(-1), 0},
		{"at the first block", at(0), 0},
		{"just after the first block", at(0).Add(time.Nanosecond), 10},
		{"at the fifth block", at(4), 13},
		{"at the last block before the gap", at(9), 18},
		{"inside the gap", at(50), 19},
		{"at the blocks that share a time", at(100), 19},
		{"after the blocks that share a time", at(101), 1_000_052},
		{"at the last block", at(200), 1_000_052},
		{"after the last block", at(300), 1_999_999},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.HeightBefore(ctx, db, "c", tt.t)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("HeightBefore(%s) = %d, want %d", tt.t.Sub(t0), got, tt.want)
			}
		})
	}
	// An EVM chain's blocks (12 s apart from t0, heights 100..104).
	if err := store.EnsurePartitions(ctx, db, "e", []string{"evm_blocks"}, 100, 104); err != nil {
		t.Fatal(err)
	}
	for h := 100; h <= 104; h++ {
		if _, err := db.ExecContext(ctx, `INSERT INTO evm_blocks VALUES ('e', ?, 'h', 'p', ?)`, h, at(12*(h-100))); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := store.HeightBefore(ctx, db, "e", at(30)); err != nil || got != 102 {
		t.Errorf("HeightBefore of an EVM chain = %d, %v; want 102", got, err)
	}
	if got, err := store.HeightBefore(ctx, db, "none", at(300)); err != nil || got != 0 {
		t.Errorf("HeightBefore of a chain without blocks = %d, %v; want 0", got, err)
	}
}
