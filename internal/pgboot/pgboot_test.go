package pgboot

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestScriptPath checks that ScriptPath finds scripts/db.sh from this
// package's directory.
func TestScriptPath(t *testing.T) {
	p := ScriptPath()
	if !filepath.IsAbs(p) || !strings.HasSuffix(p, filepath.Join("scripts", "db.sh")) {
		t.Fatalf("ScriptPath() = %q, want an absolute path ending in scripts/db.sh", p)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("ScriptPath() = %q: %v", p, err)
	}
}

// TestPrivateCluster runs the private-cluster path of scripts/db.sh end to
// end: create and start a cluster on a free loopback port, use it through
// pgx, reuse it with a second ensure, stop it.
func TestPrivateCluster(t *testing.T) {
	script := ScriptPath()
	if script == "" {
		t.Fatal("no go.mod above the working directory")
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("db.sh: %v", err)
	}
	if bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(bins) == 0 && os.Geteuid() != 0 {
		t.Skip("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin, " +
			"and db.sh cannot install them without root")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	port := freePort(t)
	env := scriptEnv(privateDir(t), port)
	// Registered after privateDir's removal, so it runs before it: never
	// leave a server running on a deleted directory, even on failure.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, stderr, err := runScript(ctx, script, env, "stop"); err != nil {
			t.Errorf("cleanup: db.sh stop: %v\n%s", err, stderr)
		}
	})

	const db = "chainlens_boot"
	want := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", port, db)

	url := ensure(ctx, t, script, env, db)
	if url != want {
		t.Fatalf("ensure printed %q, want %q", url, want)
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	var gotDB, gotAddr string
	if err := conn.QueryRow(ctx, "SELECT current_database(), host(inet_server_addr())").Scan(&gotDB, &gotAddr); err != nil {
		t.Fatalf("query server identity: %v", err)
	}
	if gotDB != db || gotAddr != "127.0.0.1" {
		t.Errorf("connected to database %q at %q, want %q at 127.0.0.1", gotDB, gotAddr, db)
	}
	for _, q := range []string{
		"CREATE TABLE t(x int)",
		"INSERT INTO t(x) VALUES (42), (7), (-1)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	got := selectAll(ctx, t, conn)
	if wantRows := []int32{-1, 7, 42}; !slices.Equal(got, wantRows) {
		t.Fatalf("SELECT x FROM t = %v, want %v", got, wantRows)
	}
	if err := conn.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}

	// A second ensure reuses the running cluster and the database in it.
	if url2 := ensure(ctx, t, script, env, db); url2 != url {
		t.Fatalf("second ensure printed %q, want %q", url2, url)
	}
	conn, err = pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("reconnect: %v", err)
	}
	if got := selectAll(ctx, t, conn); len(got) != 3 {
		t.Errorf("after second ensure, t has rows %v, want the 3 inserted", got)
	}
	if err := conn.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}

	if _, stderr, err := runScript(ctx, script, env, "stop"); err != nil {
		t.Fatalf("db.sh stop: %v\n%s", err, stderr)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = c.Close()
		t.Fatalf("%s still accepts connections after db.sh stop", addr)
	}
	status, stderr, err := runScript(ctx, script, env, "status")
	if err != nil {
		t.Fatalf("db.sh status: %v\n%s", err, stderr)
	}
	if !strings.Contains(status, "private cluster: not running") {
		t.Errorf("db.sh status after stop:\n%s", status)
	}
	// stop is a no-op (exit 0) when the cluster is not running.
	if _, stderr, err := runScript(ctx, script, env, "stop"); err != nil {
		t.Fatalf("second db.sh stop: %v\n%s", err, stderr)
	}
}

// ensure runs `db.sh ensure db` and returns the one line it printed.
func ensure(ctx context.Context, t *testing.T, script string, env []string, db string) string {
	t.Helper()
	stdout, stderr, err := runScript(ctx, script, env, "ensure", db)
	t.Logf("db.sh ensure %s stderr:\n%s", db, stderr)
	if err != nil {
		t.Fatalf("db.sh ensure %s: %v", db, err)
	}
	line, ok := strings.CutSuffix(stdout, "\n")
	if !ok || line == "" || strings.Contains(line, "\n") {
		t.Fatalf("db.sh ensure %s: stdout %q is not exactly one line", db, stdout)
	}
	return line
}

func runScript(ctx context.Context, script string, env []string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Env = env
	// The server is a daemon; should it ever keep our pipes open, do not
	// wait for it.
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

func selectAll(ctx context.Context, t *testing.T, conn *pgx.Conn) []int32 {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT x FROM t ORDER BY x")
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	return got
}

// privateDir returns a not yet existing cluster directory whose parents the
// postgres user can traverse (t.TempDir's are 0700, which breaks the root
// case, where db.sh runs the server as postgres).
func privateDir(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "chainlens-pgboot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(base); err != nil {
			t.Errorf("remove %s: %v", base, err)
		}
	})
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(base, "pg")
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// scriptEnv is the environment for db.sh: the test's own, without
// DATABASE_URL and CHAINLENS_PG_*, forced onto the private cluster in dir.
func scriptEnv(dir string, port int) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "DATABASE_URL=") || strings.HasPrefix(kv, "CHAINLENS_PG_")
	})
	return append(env,
		"CHAINLENS_PG_PRIVATE=1",
		"CHAINLENS_PG_DIR="+dir,
		"CHAINLENS_PG_PORT="+strconv.Itoa(port),
	)
}
