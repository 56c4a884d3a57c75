package reads

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/testcluster"
)

// TestLagOf: a replica's lag is how long ago the primary was past the
// position it has replayed; none when it replayed the newest sample.
func TestLagOf(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	p := New(nil, nil, 10*time.Second, slog.New(slog.DiscardHandler), nil)
	if _, ok := p.lagOf(5, t0); ok {
		t.Fatal("a lag without any sample of the primary")
	}
	for i, lsn := range []int64{100, 100, 200, 300, 300, 400} {
		p.record(sample{at: t0.Add(time.Duration(i) * time.Second), lsn: lsn})
	}
	now := t0.Add(6 * time.Second)
	for _, c := range []struct {
		replayed int64
		want     time.Duration
	}{
		{400, 0},               // everything the primary had at the last sample
		{500, 0},               // past it (the primary moved on since)
		{300, 1 * time.Second}, // the primary passed 300 by the sample at 5 s
		{250, 3 * time.Second}, // ... passed 250 by the sample at 3 s
		{100, 4 * time.Second}, // at 100 until the sample at 2 s
		{50, 6 * time.Second},  // behind every sample kept: at least the oldest's age
	} {
		got, ok := p.lagOf(c.replayed, now)
		if !ok || got != c.want {
			t.Errorf("replayed %d: lag %s (%v), want %s", c.replayed, got, ok, c.want)
		}
	}
	// Samples older than twice the max lag (plus a margin) are dropped.
	p.record(sample{at: t0.Add(time.Hour), lsn: 500})
	if len(p.samples) != 1 {
		t.Fatalf("kept %d samples an hour later, want 1", len(p.samples))
	}
}

// TestPoolReadsFromUsableReplicas on a real cluster: answers are read on
// the replicas in turn while they keep up; a replica whose replay is
// paused past max lag, or that stops, is skipped; with none usable the
// primary answers. Each snapshot reports how far its server had replayed.
func TestPoolReadsFromUsableReplicas(t *testing.T) {
	ctx := context.Background()
	c := testcluster.Start(t, 2, false)
	primary := c.Open(t, c.Primary)
	if _, err := primary.ExecContext(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	c.WaitReplayed(t)
	r0, r1 := c.Open(t, c.Reads[0]), c.Open(t, c.Reads[1])
	p := New(primary, []Replica{{Name: "read_urls[0]", DB: r0}, {Name: "read_urls[1]", DB: r1}}, 2*time.Second, slog.New(slog.DiscardHandler), nil)

	servers := func() map[string]int {
		t.Helper()
		seen := map[string]int{}
		for range 4 {
			s, err := p.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var port int
			if err := s.Tx.NewRaw("SELECT inet_server_port()").Scan(ctx, &port); err != nil {
				t.Fatal(err)
			}
			if (s.Server == "primary") != (s.Replayed == Current) {
				t.Errorf("%s: replayed %d", s.Server, s.Replayed)
			}
			seen[s.Server]++
			s.Close()
		}
		return seen
	}
	if got := servers(); got["primary"] != 4 {
		t.Fatalf("before any probe: %v, want the primary only", got)
	}
	p.Probe(ctx)
	if got := servers(); got["read_urls[0]"] != 2 || got["read_urls[1]"] != 2 {
		t.Fatalf("both replicas usable: %v, want 2 each", got)
	}

	// Replica 0's replay paused while the primary writes on: once it is
	// more than max lag behind, it is skipped.
	if _, err := r0.ExecContext(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := primary.ExecContext(ctx, "INSERT INTO t VALUES (2)"); err != nil {
			t.Fatal(err)
		}
		p.Probe(ctx)
		if st := p.Status(); !st[0].Usable {
			if st[0].LagSeconds == nil || *st[0].LagSeconds <= 2 || !st[1].Usable {
				t.Fatalf("status %+v", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica 0 still usable with its replay paused: %+v", p.Status())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := servers(); got["read_urls[1]"] != 4 {
		t.Fatalf("replica 0 lagging: %v, want replica 1 only", got)
	}
	if _, err := r0.ExecContext(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}
	c.WaitReplayed(t)
	p.Probe(ctx)
	if st := p.Status(); !st[0].Usable || *st[0].LagSeconds != 0 {
		t.Fatalf("replica 0 caught up: %+v", st)
	}

	// Both replicas unreachable: the primary answers.
	_ = r0.Close()
	_ = r1.Close()
	if got := servers(); got["primary"] != 4 {
		t.Fatalf("replicas gone: %v, want the primary", got)
	}
	p.Probe(ctx)
	for _, s := range p.Status() {
		if s.Usable || s.Error != "unreachable" {
			t.Fatalf("status after the replicas closed: %+v", p.Status())
		}
	}
}
