// Package testcluster starts, for one test, a replicated Postgres cluster
// of real servers with scripts/cluster.sh: a primary, streaming replicas
// cloned by pg_basebackup and pgbouncer in transaction mode, on free
// loopback ports, stopped and removed when the test ends.
package testcluster

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/store"
)

// Cluster is a running cluster; its URLs are those the script prints.
type Cluster struct {
	Primary  string   // the primary, direct
	Failover string   // every server, target_session_attrs=read-write
	Pooler   string   // the primary through pgbouncer
	Reads    []string // the replicas
	dir      string
	port     int
	replicas int
}

// Start starts a cluster with n replicas. The database chainlens on it is
// migrated when migrate is true. Short tests skip it.
func Start(t testing.TB, replicas int, migrate bool) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("a Postgres cluster: not in -short")
	}
	dir, err := os.MkdirTemp("", "chainlens-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	// The servers run as the postgres user, which must reach the directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{dir: dir, port: freeBase(t), replicas: replicas}
	t.Cleanup(func() {
		if out, err := c.run("down"); err != nil {
			t.Logf("cluster down: %v\n%s", err, out)
		}
		_ = os.RemoveAll(dir)
	})
	out, err := c.run("db")
	if err != nil {
		t.Fatalf("scripts/cluster.sh db: %v\n%s", err, out)
	}
	c.parse(t, out)
	if migrate {
		db := c.Open(t, c.Primary)
		if _, err := store.Migrate(context.Background(), db); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		c.WaitReplayed(t)
	}
	return c
}

// Promote fails over: the primary stops, replica 1 is promoted, pgbouncer
// points at it and the other replicas follow it.
func (c *Cluster) Promote(t testing.TB) {
	t.Helper()
	out, err := c.run("promote")
	if err != nil {
		t.Fatalf("scripts/cluster.sh promote: %v\n%s", err, out)
	}
	c.parse(t, out)
}

// StopServer stops server n (0 the first primary, 1.. the replicas);
// StartServer starts it again.
func (c *Cluster) StopServer(t testing.TB, n int) { c.node(t, "stop", n) }

// StartServer starts server n again after StopServer.
func (c *Cluster) StartServer(t testing.TB, n int) { c.node(t, "start", n) }

func (c *Cluster) node(t testing.TB, cmd string, n int) {
	t.Helper()
	if out, err := c.run(cmd, strconv.Itoa(n)); err != nil {
		t.Fatalf("scripts/cluster.sh %s %d: %v\n%s", cmd, n, err, out)
	}
}

// Open opens url for the test (closed when it ends).
func (c *Cluster) Open(t testing.TB, url string) *bun.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url, 8)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// WaitReplayed waits until every replica has replayed the primary's WAL as
// of now.
func (c *Cluster) WaitReplayed(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	primary := c.Open(t, c.Primary)
	var lsn string
	if err := primary.NewRaw("SELECT pg_current_wal_insert_lsn()::text").Scan(ctx, &lsn); err != nil {
		t.Fatal(err)
	}
	for _, u := range c.Reads {
		r := c.Open(t, u)
		deadline := time.Now().Add(30 * time.Second)
		for {
			var done bool
			if err := r.NewRaw("SELECT pg_last_wal_replay_lsn() >= ?::pg_lsn", lsn).Scan(ctx, &done); err != nil {
				t.Fatal(err)
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %s did not replay %s within 30 s", u, lsn)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (c *Cluster) run(cmd ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	x := exec.CommandContext(ctx, filepath.Join(repoRoot(), "scripts", "cluster.sh"), cmd...)
	x.Env = append(os.Environ(), "CHAINLENS_CLUSTER_DIR="+c.dir, "CHAINLENS_CLUSTER_PORT="+strconv.Itoa(c.port),
		"CHAINLENS_CLUSTER_REPLICAS="+strconv.Itoa(c.replicas))
	return x.CombinedOutput()
}

// parse reads the script's NAME='value' lines.
func (c *Cluster) parse(t testing.TB, out []byte) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), "=")
		if !ok || !strings.HasPrefix(val, "'") {
			continue
		}
		val = strings.Trim(val, "'")
		switch name {
		case "PRIMARY_URL":
			c.Primary = val
		case "FAILOVER_URL":
			c.Failover = val
		case "POOLER_URL":
			c.Pooler = val
		case "READ_URLS":
			c.Reads = strings.Fields(val)
		}
	}
	if c.Primary == "" {
		t.Fatalf("scripts/cluster.sh printed no URLs:\n%s", out)
	}
}

// freeBase finds four free consecutive loopback ports.
func freeBase(t testing.TB) int {
	t.Helper()
	for range 100 {
		base := 20000 + rand.IntN(30000)
		free := true
		for p := base; p < base+4 && free; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				free = false
				continue
			}
			_ = l.Close()
		}
		if free {
			return base
		}
	}
	t.Fatal("no four free consecutive ports")
	return 0
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
