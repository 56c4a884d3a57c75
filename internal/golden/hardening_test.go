package golden_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
)

// hostile are values an attacker or a broken client sends.
var hostile = []string{
	"' OR 1=1--", "1; DROP TABLE api_keys", "'; drop table blocks; --", "<script>alert(1)</script>", "../../../../etc/passwd",
	"\x00", "%00", strings.Repeat("9", 400), "-1", "0", "1e309", "NaN", "Infinity", "0x41", "{}", "[]", "a b",
	"\"", "\\", "ｆｕｌｌｗｉｄｔｈ", "\u202e", "\xff\xfe", strings.Repeat("A", 5000), "2025-02-30", "9999-12-31", "true", "",
}

// allOperations is every operation a server answers: the analytics and
// engagement route table and the admin API.
func allOperations() []route.Operation {
	return append(route.Table(), route.AdminTable()...)
}

// TestHostileInputNeverCausesServerErrors serves the indexed recordings of
// every chain family and sends, to every operation, each hostile value in
// each of its parameters in turn (the others at values that reach the
// handler: pools, markets, addresses and dates of the recordings), and as
// its body: every answer is a 2xx, a 3xx or a 4xx problem+json, never a
// 5xx, and no table changes. The only 503 allowed is the not-configured
// answer of an operation whose configuration the recordings lack (no state
// snapshots are taken of them, no consumer chain pays the Hub): the same
// answer it gives to valid values.
func TestHostileInputNeverCausesServerErrors(t *testing.T) {
	t.Parallel()
	db, cfg := indexed(t)
	srv := serveAt(t, db, cfg)
	before := fingerprint(t, db)
	statuses := map[int]int{}
	unconfigured := notConfigured(t, srv, cfg)
	for _, op := range allOperations() {
		if slices.Contains(unconfigured, op.ID().String()) {
			continue
		}
		base := baseValues(op)
		for _, p := range op.Params {
			for _, v := range hostile {
				set := clone(base)
				set[p.Name] = v
				statuses[send(t, srv, cfg, op, target(cfg, op, set), nil)]++
			}
		}
		if op.Body != nil || op.Method == http.MethodPost {
			for _, v := range hostile {
				statuses[send(t, srv, cfg, op, target(cfg, op, base), []byte(v))]++
				statuses[send(t, srv, cfg, op, target(cfg, op, base), objectOf(op.Body, v))]++
			}
			statuses[send(t, srv, cfg, op, target(cfg, op, base), []byte(`{"name":"`+strings.Repeat("x", 40<<10)+`"}`))]++
		}
	}
	after := fingerprint(t, db)
	for table, sum := range before {
		if after[table] != sum {
			t.Errorf("table %s changed", table)
		}
	}
	for table := range after {
		if _, ok := before[table]; !ok {
			t.Errorf("table %s appeared", table)
		}
	}
	t.Logf("%d operations, answers by status: %v; not configured in the recordings: %v", len(allOperations()), statuses, unconfigured)
	if len(unconfigured) > 3 {
		t.Errorf("%d operations are not configured in the recordings: %v", len(unconfigured), unconfigured)
	}
}

// FuzzOperation sends an arbitrary value in one parameter (or the body) of
// one operation of the server of the indexed recordings: never a 5xx.
func FuzzOperation(f *testing.F) {
	ops := allOperations()
	for i := range ops {
		for _, v := range []string{"\x00", "-1", strings.Repeat("9", 40), "%zz", "a/../b"} {
			f.Add(uint16(i), uint8(0), v)
		}
	}
	db, cfg := indexed(f)
	srv := serveAt(f, db, cfg)
	unconfigured := notConfigured(f, srv, cfg)
	f.Fuzz(func(t *testing.T, opIndex uint16, param uint8, v string) {
		op := ops[int(opIndex)%len(ops)]
		if slices.Contains(unconfigured, op.ID().String()) {
			return
		}
		set := baseValues(op)
		var body []byte
		if n := len(op.Params); n > 0 && (op.Body == nil || int(param)%(n+1) < n) {
			set[op.Params[int(param)%n].Name] = v
		} else {
			body = objectOf(op.Body, v)
		}
		send(t, srv, cfg, op, target(cfg, op, set), body)
	})
}

// notConfigured lists the operations that answer not-configured to valid
// values on the recordings' config.
func notConfigured(t testing.TB, srv apitest.Server, cfg *config.Config) []string {
	t.Helper()
	var out []string
	for _, op := range allOperations() {
		if op.Method != http.MethodGet {
			continue
		}
		if resp, body := srv.Get(t, target(cfg, op, baseValues(op))); resp.StatusCode == http.StatusServiceUnavailable &&
			strings.Contains(string(body), `"type":"`+problem.NotConfiguredType+`"`) {
			out = append(out, op.ID().String())
		}
	}
	return out
}

// serveAt serves cfg's API on db with the clock just after the last block,
// with a secret key of every scope, the admin API's included.
func serveAt(t testing.TB, db *bun.DB, cfg *config.Config) apitest.Server {
	t.Helper()
	ctx := context.Background()
	now := clockAfter(t, db)
	srv := apitest.Serve(t, db, cfg, now)
	key, _, err := apikey.Create(ctx, db, apikey.Spec{Name: "hostile", Kind: apikey.Secret, Scopes: []string{apikey.ScopeAll, apikey.ScopeAdmin},
		QuotaCredits: 1 << 40, QuotaPeriod: time.Hour, RatePerSec: 1e6, RateBurst: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	srv.Key = key
	return srv
}

// baseValues sets every path and required parameter of op to its first
// candidate value of the recordings (x when there is none).
func baseValues(op route.Operation) map[string]string {
	set := map[string]string{}
	for _, p := range op.Params {
		if p.In == route.InPath || p.Required {
			set[p.Name] = "x"
			if c := param(op.Group, p); len(c) > 0 {
				set[p.Name] = c[0]
			}
		}
	}
	return set
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// target is op's URL (its group's prefix) with the parameters of set.
func target(cfg *config.Config, op route.Operation, set map[string]string) string {
	return cfg.API.Groups[op.Group.Base()].Prefix + withParams(op, set)
}

// withParams is op's path with the path and query parameters of set.
func withParams(op route.Operation, set map[string]string) string {
	path := op.Path
	q := url.Values{}
	for _, p := range op.Params {
		v, ok := set[p.Name]
		if !ok {
			continue
		}
		if p.In == route.InPath {
			path = strings.Replace(path, "{"+p.Name+"}", url.PathEscape(v), 1)
		} else {
			q.Set(p.Name, v)
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// objectOf is a JSON object with every member of schema set to v.
func objectOf(schema *route.Schema, v string) []byte {
	obj := map[string]string{}
	if schema != nil {
		for _, p := range schema.Properties {
			obj[p.Name] = v
		}
	}
	b, _ := json.Marshal(obj)
	return b
}

// send asks one request with the server's key and checks the answer's
// status and type; it returns the status.
func send(t testing.TB, srv apitest.Server, cfg *config.Config, op route.Operation, target string, body []byte) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(op.Method, srv.URL+target, rd)
	if err != nil {
		return 0 // not even a URL; nothing to send
	}
	req.Header.Set("Authorization", "Bearer "+srv.Key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", op.Method, target, err)
	}
	rb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		t.Errorf("%s %.300s: %d %.400s", op.Method, target, resp.StatusCode, rb)
	}
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("%s %.300s: %d without problem+json", op.Method, target, resp.StatusCode)
	}
	return resp.StatusCode
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// fingerprint hashes the rows of every table but the usage meter's (which
// every request moves), to prove requests change nothing.
func fingerprint(t testing.TB, db *bun.DB) map[string]string {
	t.Helper()
	ctx := context.Background()
	var tables []string
	if err := db.NewRaw(`SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND relname NOT IN ('api_key_usage')`).Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tb := range tables {
		var sum string
		if err := db.NewRaw("SELECT count(*) || ' ' || coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM ? t",
			bun.Ident(tb)).Scan(ctx, &sum); err != nil {
			t.Fatal(err)
		}
		out[tb] = sum
	}
	return out
}
