package testcluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/internal/testcluster"
)

// TestPromoteRewindsADivergedReplica makes replica 2 hold WAL that replica
// 1 never received (replica 1 is down while the primary commits, then the
// primary is lost and replica 1 promoted): such a replica can never follow
// the new timeline by itself. scripts/cluster.sh promote must wind it back
// to the fork so that it follows the new primary.
func TestPromoteRewindsADivergedReplica(t *testing.T) {
	c := testcluster.Start(t, 2, false)
	ctx := context.Background()
	replica2 := c.Reads[1]
	primary := c.Open(t, c.Primary)
	if _, err := primary.ExecContext(ctx, "CREATE TABLE w (v text)"); err != nil {
		t.Fatal(err)
	}
	c.StopServer(t, 1)
	if _, err := primary.ExecContext(ctx, "INSERT INTO w VALUES ('before')"); err != nil {
		t.Fatal(err)
	}
	waitRows(t, c.Open(t, replica2), "before", 1)
	c.StopServer(t, 0)
	c.StartServer(t, 1)
	c.Promote(t)

	if _, err := c.Open(t, c.Primary).ExecContext(ctx, "INSERT INTO w VALUES ('after')"); err != nil {
		t.Fatal(err)
	}
	follower := c.Open(t, replica2)
	waitRows(t, follower, "after", 1)
	// Replica 2 now shows the new primary's history, not its own.
	waitRows(t, follower, "before", 0)
}

func waitRows(t *testing.T, db *bun.DB, v string, want int) {
	t.Helper()
	var n int
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err = db.NewRaw("SELECT count(*) FROM w WHERE v = ?", v).Scan(context.Background(), &n); err == nil && n == want {
			return
		}
	}
	t.Fatalf("rows %q on %s: %d (err %v), want %d", v, db.String(), n, err, want)
}
