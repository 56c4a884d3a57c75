package main_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/testdb"
)

// bin is the chainlens binary under test; devBin is chainlens-dev, whose
// replay nodes serve the recordings the tests index.
var bin, devBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "chainlens-bin")
	if err != nil {
		panic(err)
	}
	bin, devBin = filepath.Join(dir, "chainlens"), filepath.Join(dir, "chainlens-dev")
	// One go build for both: it links them in parallel.
	if b, err := exec.Command("go", "build", "-o", dir+"/", ".", "../chainlens-dev").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the binaries: %v\n%s", err, b)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// run runs the binary with args and returns its stdout, stderr and exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runFor(t, 5*time.Minute, args...)
}

func waitHTTP(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never answered", url)
}

func TestHelpListsSubcommands(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, sub := range []string{"run", "index", "aggregate", "serve", "migrate", "keys", "status", "messages", "version"} {
		if !strings.Contains(out, "\n  "+sub+" ") {
			t.Errorf("--help lacks %q", sub)
		}
	}
	// The local chains are chainlens-dev's, not the production binary's.
	for _, sub := range []string{"devnet", "replay-node"} {
		if strings.Contains(out, "\n  "+sub+" ") {
			t.Errorf("chainlens --help lists %q", sub)
		}
	}
	dev, err := exec.Command(devBin, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"devnet", "replay-node"} {
		if !strings.Contains(string(dev), "\n  "+sub+" ") {
			t.Errorf("chainlens-dev --help lacks %q", sub)
		}
	}
}

func TestBrokenConfigExitsNamingTheKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct{ yaml, want string }{
		{"database: {url: postgres://x@127.0.0.1/x}\nchains:\n  - {id: a, kind: osmosis, rpc: [http://127.0.0.1:1], batch_sise: 3}\n", `unknown key "batch_sise"`},
		{"database: {url: postgres://x@127.0.0.1/x}\nchains:\n  - {id: a, kind: osmosis, rpc: [http://127.0.0.1:1], poll_interval: soon}\n", `"soon" is not a duration`},
		{"database: {url: postgres://x@127.0.0.1/x}\naggregator: {schedule: nope}\n", "aggregator.schedule (line 2)"},
		{"chains: []\n", "database.url"},
	}
	for i, c := range cases {
		f := filepath.Join(dir, fmt.Sprintf("c%d.yaml", i))
		_ = os.WriteFile(f, []byte(c.yaml), 0o644)
		_, stderr, code := run(t, "migrate", "up", "--config", f)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("case %d: exit %d, stderr %q; want non-zero naming %q", i, code, stderr, c.want)
		}
	}
	if _, stderr, code := run(t, "migrate", "up", "--config", filepath.Join(dir, "missing.yaml")); code == 0 || !strings.Contains(stderr, "missing.yaml") {
		t.Errorf("missing file: exit %d, %q", code, stderr)
	}
}

// TestContractInvocations runs the invocations outside tests rely on against
// real Postgres and a replay node serving the recorded Osmosis localnet.
func TestContractInvocations(t *testing.T) {
	t.Parallel()
	_, dbURL := testdb.New(t)
	nodeAddr, apiAddr := freeAddr(t), freeAddr(t)
	node := exec.Command(devBin, "replay-node", "--data", "../../testdata/localnet/osmosis", "--listen", nodeAddr)
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Process.Kill(); _ = node.Wait() })
	waitHTTP(t, "http://"+nodeAddr+"/health")

	cfg := filepath.Join(t.TempDir(), "c.yaml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf(`database: {url: %q}
api: {listen: %s}
log: {level: warn}
chains:
  - {id: localosmosis, kind: osmosis, rpc: [http://%s]}
`, dbURL, apiAddr, nodeAddr)), 0o644)

	for i := range 2 {
		if _, stderr, code := run(t, "migrate", "up", "--config", cfg); code != 0 {
			t.Fatalf("migrate up #%d: %d %s", i, code, stderr)
		}
	}
	if _, stderr, code := run(t, "index", "--config", cfg, "--until", "120"); code != 0 {
		t.Fatalf("index --until: %d %s", code, stderr)
	}
	status, _, _ := run(t, "status", "--config", cfg)
	if !strings.Contains(status, "localosmosis") || !strings.Contains(status, " 120 ") || !strings.Contains(status, "SNAPSHOT") || !strings.Contains(status, "  off  ") {
		t.Fatalf("status after index --until 120:\n%s", status)
	}
	// Every message of the recording is decoded; the replay node serves no
	// descriptors of its own.
	if !regexp.MustCompile(`(?m)^localosmosis\s+[1-9][0-9]*\s+100\.00%\s+none\s+none \(shipped sets only\)`).MatchString(status) {
		t.Fatalf("status messages after index --until 120:\n%s", status)
	}
	if out, stderr, code := run(t, "index", "--config", cfg, "--redecode"); code != 0 || !strings.Contains(out, "localosmosis: 0 messages decoded, 0 completed, 0 still kept raw") {
		t.Fatalf("index --redecode: %d %s %s", code, out, stderr)
	}
	if _, stderr, code := run(t, "index", "--config", cfg, "--redecode", "--until", "5"); code == 0 || !strings.Contains(stderr, "--redecode takes only --chain") {
		t.Fatalf("index --redecode --until: %d %s", code, stderr)
	}
	// The recording's first user tx (height 4) is a bank send by this
	// account; it is found under the Cosmos Hub prefix too.
	for _, addr := range []string{"osmo10djef6v9uls3svdz3438m05l8hak33rlwhk90s", "cosmos10djef6v9uls3svdz3438m05l8hak33rlxv94ez"} {
		out, stderr, code := run(t, "messages", "--config", cfg, "--address", addr, "--limit", "1000")
		if code != 0 || !strings.Contains(out, "5C252E756F3F185F6258A468B0C72AD6F34EEEA70FBDC7A8E8C149D08C4D8018  0    /cosmos.bank.v1beta1.MsgSend") {
			t.Fatalf("messages --address %s: %d\n%s%s", addr, code, out, stderr)
		}
	}
	if _, stderr, code := run(t, "messages", "--config", cfg, "--address", "osmo1nope"); code == 0 || !strings.Contains(stderr, "is not a bech32 or 0x address") {
		t.Fatalf("messages with a bad address: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, "aggregate", "--config", cfg, "--once"); code != 0 {
		t.Fatalf("aggregate --once: %d %s", code, stderr)
	}
	key, stderr, code := run(t, "keys", "create", "--config", cfg, "--name", "ci", "--scopes", "all")
	key = strings.TrimSpace(key)
	if code != 0 || !strings.HasPrefix(key, "sk_") || strings.Contains(key, "\n") {
		t.Fatalf("keys create: %d %q %s", code, key, stderr)
	}
	if _, stderr, code := run(t, "keys", "create", "--config", cfg, "--name", "x", "--scopes", "dexx"); code == 0 || !strings.Contains(stderr, `unknown scope "dexx"`) {
		t.Fatalf("bad scope accepted: %d %s", code, stderr)
	}

	srv := exec.Command(bin, "serve", "--config", cfg)
	stderrPipe, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s := bufio.NewScanner(stderrPipe)
		for s.Scan() {
		}
	}()
	waitHTTP(t, "http://"+apiAddr+"/healthz")
	resp, err := http.Get("http://" + apiAddr + "/readyz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("readyz: %v %v", resp, err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest("GET", "http://"+apiAddr+"/openapi.json", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("openapi: %v %v", resp, err)
	}
	resp.Body.Close()
	_ = srv.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve did not exit 0 on SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}

// TestIndexerProcessMetricsAndShutdown runs `index` as its own process
// following a chain: its /metrics shows the indexed height and the lag, and
// SIGTERM stops it with exit 0.
func TestIndexerProcessMetricsAndShutdown(t *testing.T) {
	t.Parallel()
	_, dbURL := testdb.New(t)
	nodeAddr, metricsAddr := freeAddr(t), freeAddr(t)
	node := exec.Command(devBin, "replay-node", "--data", "../../testdata/localnet/osmosis", "--listen", nodeAddr)
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Process.Kill(); _ = node.Wait() })
	waitHTTP(t, "http://"+nodeAddr+"/health")
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf(`database: {url: %q}
metrics: {listen: %s}
log: {level: warn}
chains:
  - {id: localosmosis, kind: osmosis, rpc: [http://%s], poll_interval: 50ms}
`, dbURL, metricsAddr, nodeAddr)), 0o644)
	idx := exec.Command(bin, "index", "--config", cfg)
	if err := idx.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- idx.Wait() }()
	wants := []string{`chainlens_indexer_indexed_height{chain="localosmosis"} 299`, `chainlens_indexer_lag_blocks{chain="localosmosis"} 0`,
		`chainlens_indexer_node_height{chain="localosmosis"} 299`, `chainlens_indexer_blocks_total{chain="localosmosis"} 299`,
		`chainlens_indexer_dead_letters{chain="localosmosis"} 0`, `chainlens_indexer_lowest_dead_letter_height{chain="localosmosis"} 0`,
		`chainlens_indexer_foreign_events_total{chain="localosmosis"} 0`,
		// Every message of the recording decoded from the shipped descriptors.
		`chainlens_indexer_messages_total{chain="localosmosis"} 399`, `chainlens_indexer_unknown_messages_total{chain="localosmosis"} 0`,
		`chainlens_indexer_partial_messages_total{chain="localosmosis"} 0`,
		`chainlens_rpc_endpoint_up{chain="localosmosis",endpoint="` + nodeAddr + `",index="0"} 1`,
		`chainlens_rpc_endpoint_errors_total{chain="localosmosis",endpoint="` + nodeAddr + `",index="0"} 0`}
	missing := wants
	for deadline := time.Now().Add(30 * time.Second); len(missing) > 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		missing = nil
		for _, w := range wants {
			if !strings.Contains(string(b), w) {
				missing = append(missing, w)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("metrics lack %q", missing)
	}
	_ = idx.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("index did not exit 0 on SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("index did not stop on SIGTERM")
	}
}

// startNode runs `chainlens-dev replay-node` on a recording until the test ends
// and returns its URL.
func startNode(t *testing.T, data string) string {
	t.Helper()
	addr := freeAddr(t)
	node := exec.Command(devBin, "replay-node", "--data", data, "--listen", addr)
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Process.Kill(); _ = node.Wait() })
	waitHTTP(t, "http://"+addr+"/")
	return "http://" + addr
}

// runFor is run with a deadline: a command still running after it fails
// the test (it would hang for ever).
func runFor(t *testing.T, d time.Duration, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v did not finish within %s; stderr:\n%s", args, d, stderr.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// TestIndexSeveralChains indexes two cosmos chains and an EVM chain (whose
// first endpoint is down, and whose confirmations are 0) through a pool of
// one connection for work: each chain's lock holds a connection of its own.
// It then checks the --chain, reindex and --until refusals.
func TestIndexSeveralChains(t *testing.T) {
	t.Parallel()
	_, dbURL := testdb.New(t)
	osmo := startNode(t, "../../testdata/localnet/osmosis")
	ntrn := startNode(t, "../../testdata/localnet/neutron")
	evm := startNode(t, "../../testdata/evm/recorded")
	dead := "http://" + freeAddr(t)
	write := func(name, chains string) string {
		f := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(f, []byte(fmt.Sprintf("database: {url: %q, max_conns: 1}\nlog: {level: warn}\nchains:\n%s", dbURL, chains)), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	cfg := write("c.yaml", fmt.Sprintf(`  - {id: localosmosis, kind: osmosis, rpc: [%s]}
  - {id: localneutron, kind: neutron, rpc: [%s]}
  - {id: binance-smart-chain-56, kind: evm, evm_chain_id: 1337, rpc: [%s, %s], confirmations: 0,
     tokens: [{address: "0xd87f14a1b784f5eda472997fd01530c7f60f4781", symbol: USDC, decimals: 6}]}
`, osmo, ntrn, dead, evm))
	if _, stderr, code := run(t, "migrate", "up", "--config", cfg); code != 0 {
		t.Fatalf("migrate: %d %s", code, stderr)
	}
	if _, stderr, code := runFor(t, 3*time.Minute, "index", "--config", cfg, "--until", "100"); code != 0 {
		t.Fatalf("index --until 100: %d %s", code, stderr)
	}
	status, _, _ := run(t, "status", "--config", cfg)
	for _, want := range []string{"localosmosis  osmosis  100  100", "localneutron  neutron  100  100", "binance-smart-chain-56  evm  100  100"} {
		if !strings.Contains(strings.Join(strings.Fields(status), "  "), want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}

	refusals := []struct {
		args []string
		want string
	}{
		{[]string{"index", "--until", "5", "--chain", "nope"}, `--chain "nope": no such chain`},
		{[]string{"index", "--from", "10", "--to", "20"}, "add --chain (one of localosmosis, localneutron)"},
		{[]string{"index", "--from", "10", "--to", "20", "--chain", "binance-smart-chain-56"}, "is an EVM chain"},
		{[]string{"index", "--from", "10", "--to", "120", "--chain", "localosmosis"}, "height 120 is not indexed yet (indexed through 100)"},
	}
	for _, r := range refusals {
		if _, stderr, code := runFor(t, time.Minute, append(r.args, "--config", cfg)...); code == 0 || !strings.Contains(stderr, r.want) {
			t.Errorf("%v: exit %d, stderr %q; want non-zero naming %q", r.args, code, stderr, r.want)
		}
	}
	if _, stderr, code := runFor(t, time.Minute, "index", "--config", cfg, "--from", "10", "--to", "20", "--chain", "localosmosis"); code != 0 {
		t.Errorf("reindex 10..20 of localosmosis: %d %s", code, stderr)
	}
	// Only the named chain is indexed further.
	if _, stderr, code := runFor(t, time.Minute, "index", "--config", cfg, "--until", "120", "--chain", "localneutron"); code != 0 {
		t.Fatalf("index --until 120 --chain localneutron: %d %s", code, stderr)
	}
	status, _, _ = run(t, "status", "--config", cfg)
	for _, want := range []string{"localosmosis  osmosis  100  100", "localneutron  neutron  120  120"} {
		if !strings.Contains(strings.Join(strings.Fields(status), "  "), want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}

	// Retention: refused without a setting; with one, held by the jobs
	// that read the raw tables and have not run.
	if _, stderr, code := runFor(t, time.Minute, "prune", "--config", cfg); code == 0 || !strings.Contains(stderr, "no chain in") {
		t.Errorf("prune without retention: exit %d, stderr %q", code, stderr)
	}
	retained := write("retained.yaml", fmt.Sprintf("  - {id: localosmosis, kind: osmosis, rpc: [%s], retention: {keep_heights: 10}}\n", osmo))
	out, stderr, code := runFor(t, time.Minute, "prune", "--dry-run", "--config", retained)
	if code != 0 || !strings.Contains(out, "localosmosis: raw rows below height 1 may go (held there by job ") || !strings.Contains(out, "would drop 0 partitions") {
		t.Errorf("prune --dry-run: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if status, _, _ := run(t, "status", "--config", retained); !strings.Contains(status, "localosmosis: keeps the last 10 heights; raw rows of every indexed height") {
		t.Errorf("status lacks the retention line:\n%s", status)
	}

	// A node that never answers fails --until instead of being waited for.
	unreachable := write("dead.yaml", fmt.Sprintf("  - {id: localosmosis, kind: osmosis, rpc: [%s], start_height: 1}\n", dead))
	_, stderr, code = runFor(t, time.Minute, "index", "--config", unreachable, "--until", "5", "--give-up-after", "1s")
	if code == 0 || !strings.Contains(stderr, "no node answered for 1s") {
		t.Errorf("index against a dead node: exit %d, stderr %q", code, stderr)
	}
	// A target below the first height to index can never be reached.
	_, fresh := testdb.New(t)
	late := filepath.Join(t.TempDir(), "late.yaml")
	_ = os.WriteFile(late, []byte(fmt.Sprintf("database: {url: %q}\nlog: {level: warn}\nchains:\n  - {id: localosmosis, kind: osmosis, rpc: [%s], start_height: 50}\n", fresh, osmo)), 0o644)
	if _, stderr, code := run(t, "migrate", "up", "--config", late); code != 0 {
		t.Fatalf("migrate: %d %s", code, stderr)
	}
	if _, stderr, code := runFor(t, time.Minute, "index", "--config", late, "--until", "20"); code == 0 || !strings.Contains(stderr, "height 20 is below the chain's first indexed height 50") {
		t.Errorf("index --until below start_height: exit %d, stderr %q", code, stderr)
	}
	// A node that serves no state queries (the replay node answers no
	// abci_query): the start after the initial height indexes on without
	// opening balances, and says so.
	if _, stderr, code := runFor(t, time.Minute, "index", "--config", late, "--until", "60"); code != 0 || !strings.Contains(stderr, "the node serves no bank state at the height before the first indexed one") {
		t.Errorf("index from 50 on a node without state queries: exit %d, stderr %q", code, stderr)
	}
	if status, _, _ := run(t, "status", "--config", late); !strings.Contains(status, "none (balances before the first indexed height unknown)") {
		t.Errorf("status after a start without opening balances:\n%s", status)
	}
}

// TestBadInputIsRefused: commands refuse input that would do something
// else than asked (revoke another key, store an origin no browser sends,
// import half a file, drop tables unasked) with a message and a non-zero
// exit, and change nothing.
func TestBadInputIsRefused(t *testing.T) {
	t.Parallel()
	db, dbURL := testdb.New(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf("database: {url: %q}\nlog: {level: warn}\n", dbURL)), 0o644)
	if _, stderr, code := run(t, "migrate", "up", "--config", cfg); code != 0 {
		t.Fatalf("migrate up: %d %s", code, stderr)
	}
	joined := filepath.Join(dir, "joined.json")
	_ = os.WriteFile(joined, []byte(`{"audiences":[{"name":"all","kind":"global"}]}{"campaigns":[]}`), 0o644)
	empty := filepath.Join(dir, "empty.json")
	_ = os.WriteFile(empty, []byte(`{}`), 0o644)
	urls := filepath.Join(dir, "urls.txt")
	_ = os.WriteFile(urls, []byte("x http://127.0.0.1:1/\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"keys", "create", "--name", "7", "--scopes", "all"}, "must not be a number"},
		{[]string{"keys", "create", "--name", "site", "--scopes", "engagement", "--publishable", "--origins", "https://app.example/shop"}, "no path"},
		{[]string{"keys", "create", "--name", "x", "--scopes", "all", "--rate", "NaN"}, "--rate: must be a number"},
		{[]string{"migrate", "down"}, "run it again with --yes"},
		{[]string{"campaigns", "import", joined}, "more after its JSON object"},
		{[]string{"campaigns", "import", empty}, "nothing to import"},
		{[]string{"bench", "http", "--urls", urls, "--rate", "2000000000", "--duration", "1s"}, "at most 100000"},
	} {
		if _, stderr, code := run(t, append(c.args, "--config", cfg)...); code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want non-zero naming %q", c.args, code, stderr, c.want)
		}
	}
	// Nothing was reverted; an origin is stored as browsers send it.
	if out, _, _ := run(t, "migrate", "status", "--config", cfg); strings.Contains(out, "pending") {
		t.Errorf("migrations reverted without --yes:\n%s", out)
	}
	if _, stderr, code := run(t, "keys", "create", "--name", "site", "--scopes", "engagement", "--publishable", "--origins", "HTTPS://App.Example:443/", "--config", cfg); code != 0 {
		t.Fatalf("keys create with an origin to normalise: %d %s", code, stderr)
	}
	var origins []string
	if err := db.NewRaw("SELECT unnest(origins) FROM api_keys").Scan(context.Background(), &origins); err != nil || len(origins) != 1 || origins[0] != "https://app.example" {
		t.Errorf("stored origins %v (%v), want [https://app.example]", origins, err)
	}
}
