package replaynode

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// do sends one HTTP request and returns status, Content-Type and body.
func do(t *testing.T, srv *httptest.Server, method, path, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// resultOf decodes a success reply and returns its result.
func resultOf(t *testing.T, body string) map[string]any {
	t.Helper()
	var r struct {
		Result map[string]any  `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	if r.Error != nil || r.Result == nil {
		t.Fatalf("not a success reply: %s", body)
	}
	return r.Result
}

func field(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%v: not an object at %q", path, p)
		}
		v = m[p]
	}
	return v
}

func TestHTTPReplies(t *testing.T) {
	rec := loadRecording(t, "osmosis")
	srv := httptest.NewServer(New(rec, Options{}).Handler())
	defer srv.Close()

	const tooHigh = `"error":{"code":-32603,"message":"Internal error","data":"height 300 must be less than or equal to the current blockchain height 299"}}`
	batch11 := "[" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"health"},`, 11), ",") + "]"
	tests := []struct {
		name       string
		method     string
		path, body string
		wantCode   int
		want       string // exact body; empty means check wantPrefix
		wantPrefix string
	}{
		{"height above tip", "POST", "/", `{"jsonrpc":"2.0","id":"abc","method":"block","params":{"height":"300"}}`,
			200, `{"jsonrpc":"2.0","id":"abc",` + tooHigh, ""},
		{"height above tip, block_results, numeric param", "POST", "/", `{"jsonrpc":"2.0","id":3,"method":"block_results","params":{"height":300}}`,
			200, `{"jsonrpc":"2.0","id":3,` + tooHigh, ""},
		{"height 0", "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"block","params":{"height":"0"}}`,
			200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"height must be greater than 0, but got 0"}}`, ""},
		{"negative height over URI", "GET", "/block?height=-2", "",
			500, `{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":"height must be greater than 0, but got -2"}}`, ""},
		{"height above tip over URI", "GET", "/block?height=300", "",
			500, `{"jsonrpc":"2.0","id":-1,` + tooHigh, ""},
		{"bad URI param", "GET", "/block?height=abc", "",
			500, `{"jsonrpc":"2.0","id":-1,"error":{"code":-32602,"message":"Invalid params","data":"error converting http params to arguments: invalid integer \"abc\" for height"}}`, ""},
		{"hex URI param for an integer", "GET", "/block?height=0x10", "",
			500, `{"jsonrpc":"2.0","id":-1,"error":{"code":-32602,"message":"Invalid params","data":"error converting http params to arguments: got a hex string arg, but expected an integer for height"}}`, ""},
		{"unknown method", "POST", "/", `{"jsonrpc":"2.0","id":5,"method":"tx_search","params":{}}`,
			200, `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}`, ""},
		{"unknown URI path", "GET", "/tx_search?query=x", "",
			404, `{"jsonrpc":"2.0","id":-1,"error":{"code":-32601,"message":"Method not found"}}`, ""},
		{"parse error", "POST", "/", `{"jsonrpc":"2.0",`,
			500, "", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error. Invalid JSON","data":"error unmarshaling request: `},
		{"id of unknown type", "POST", "/", `{"jsonrpc":"2.0","id":true,"method":"health"}`,
			500, "", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error. Invalid JSON","data":"error unmarshaling request: json-rpc ID (true) is of unknown type (bool)"`},
		{"numeric id is truncated", "POST", "/", `{"jsonrpc":"2.0","id":7.9,"method":"health"}`,
			200, `{"jsonrpc":"2.0","id":7,"result":{}}`, ""},
		{"notification gets no reply", "POST", "/", `{"jsonrpc":"2.0","method":"health"}`, 200, "", ""},
		{"batch", "POST", "/", `[{"jsonrpc":"2.0","id":1,"method":"health"},{"jsonrpc":"2.0","method":"health"},{"jsonrpc":"2.0","id":"x","method":"nope"}]`,
			200, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found"}}]`, ""},
		{"batch of one is answered with an object, as CometBFT does", "POST", "/", `[{"jsonrpc":"2.0","id":9,"method":"health"}]`,
			200, `{"jsonrpc":"2.0","id":9,"result":{}}`, ""},
		{"batch too large", "POST", "/", batch11,
			200, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":"batch request exceeds maximum (10) allowed number of requests"}}`, ""},
		{"body too large", "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"health","params":{"x":"` + strings.Repeat("a", maxBodyBytes) + `"}}`,
			400, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":"error reading request body: http: request body too large"}}`, ""},
		{"too many positional params", "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"block","params":["5","6"]}`,
			200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"error converting json params to arguments: expected 1 parameters ([height]), got 2"}}`, ""},
		{"non-integer param", "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"block","params":{"height":"x"}}`,
			200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"error converting json params to arguments: invalid integer \"x\" for height"}}`, ""},
		{"fractional param", "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"block","params":{"height":5.5}}`,
			200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"error converting json params to arguments: invalid integer \"5.5\" for height"}}`, ""},
		{"params neither object nor array", "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"block","params":"5"}`,
			200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"error converting json params to arguments: unknown type for JSON params. Expected map or array"}}`, ""},
		{"validators page out of range", "GET", "/validators?page=2", "",
			500, `{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":"page should be within [1, 1] range, given 2"}}`, ""},
		{"validators above tip + 1", "GET", "/validators?height=301", "",
			500, `{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":"height 301 must be less than or equal to the current blockchain height 300"}}`, ""},
		{"blockchain min above max", "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"blockchain","params":{"minHeight":"10","maxHeight":"5"}}`,
			200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"min height 10 can't be greater than max height 5"}}`, ""},
		{"blockchain negative", "GET", "/blockchain?minHeight=-1", "",
			500, `{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":"heights must be non-negative"}}`, ""},
		{"genesis chunk out of range", "GET", "/genesis_chunked?chunk=1", "",
			500, `{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":"there are 0 chunks, 1 is invalid"}}`, ""},
		{"health over URI", "GET", "/health", "", 200, `{"jsonrpc":"2.0","id":-1,"result":{}}`, ""},
		{"block_by_hash of an unknown hash", "GET", "/block_by_hash?hash=0x00", "",
			200, `{"jsonrpc":"2.0","id":-1,"result":{"block_id":{"hash":"","parts":{"total":0,"hash":""}},"block":null}}`, ""},
		{"header_by_hash of an unknown hash", "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"header_by_hash","params":{"hash":"00FF"}}`,
			200, `{"jsonrpc":"2.0","id":1,"result":{"header":null}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, ctype, body := do(t, srv, tt.method, tt.path, tt.body)
			if code != tt.wantCode {
				t.Errorf("status %d, want %d", code, tt.wantCode)
			}
			if body != "" && ctype != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ctype)
			}
			if tt.wantPrefix != "" {
				if !strings.HasPrefix(body, tt.wantPrefix) {
					t.Errorf("body\n%s\nwant prefix\n%s", body, tt.wantPrefix)
				}
			} else if body != tt.want {
				t.Errorf("body\n%s\nwant\n%s", body, tt.want)
			}
		})
	}
}

// TestErrorShapeMatchesRecordedNode compares the error reply with the one a real CometBFT 0.38
// node gave for block 0 (recorded in testdata/cometbft/v0.38).
func TestErrorShapeMatchesRecordedNode(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "cometbft", "v0.38", "block-0-error.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(loadRecording(t, "osmosis"), Options{}).Handler())
	defer srv.Close()
	_, _, body := do(t, srv, "POST", "/", `{"jsonrpc":"2.0","id":"0634391f-a6b0-445c-b568-e41a2446849e","method":"block","params":{"height":"0"}}`)
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reply %v, want %v", got, want)
	}
}

func TestHTTPResults(t *testing.T) {
	rec := loadRecording(t, "osmosis")
	srv := httptest.NewServer(New(rec, Options{}).Handler())
	defer srv.Close()

	t.Run("same block over all transports and param forms", func(t *testing.T) {
		var first string
		for _, req := range []struct{ method, path, body string }{
			{"GET", "/block?height=5", ""},
			{"GET", `/block?height="5"`, ""},
			{"POST", "/block?height=5", ""},
			{"POST", "/", `{"jsonrpc":"2.0","id":-1,"method":"block","params":{"height":"5"}}`},
			{"POST", "/", `{"jsonrpc":"2.0","id":-1,"method":"block","params":{"height":5}}`},
			{"POST", "/", `{"jsonrpc":"2.0","id":-1,"method":"block","params":["5"]}`},
		} {
			code, _, body := do(t, srv, req.method, req.path, req.body)
			if code != 200 {
				t.Fatalf("%v: status %d: %s", req, code, body)
			}
			if first == "" {
				first = body
				if h := field(t, resultOf(t, body), "block", "header", "height"); h != "5" {
					t.Fatalf("height %v, want 5", h)
				}
			} else if body != first {
				t.Errorf("%v: reply differs from GET /block?height=5", req)
			}
		}
		// The reply carries the recorded result byte for byte.
		line := readLines(t, filepath.Join(localnetDir, "osmosis", blocksFile))[4]
		if first != string(line) {
			t.Errorf("GET /block?height=5 is not the recorded line 5")
		}
	})

	t.Run("status at the last height equals the recorded status", func(t *testing.T) {
		for _, c := range recordings {
			if !c.statusAtLast {
				continue
			}
			srv := httptest.NewServer(New(loadRecording(t, c.name), Options{}).Handler())
			_, _, body := do(t, srv, "GET", "/status", "")
			srv.Close()
			var got, want any
			json.Unmarshal([]byte(body), &got)
			b, _ := os.ReadFile(filepath.Join(localnetDir, c.name, statusFile))
			json.Unmarshal(b, &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: /status\n%v\nwant recorded\n%v", c.name, got, want)
			}
		}
	})

	t.Run("dydx status is rewritten to the last recorded block", func(t *testing.T) {
		srv := httptest.NewServer(New(loadRecording(t, "dydx"), Options{}).Handler())
		defer srv.Close()
		_, _, body := do(t, srv, "GET", "/status", "")
		si := field(t, resultOf(t, body), "sync_info").(map[string]any)
		want := map[string]any{
			"latest_block_hash":     "FB9DFD000C4A5F9DD465DD0F16E4688A57BBE354BECDD8051E972D9ABD01E37C",
			"latest_app_hash":       "7A24528FCFE44B53A464E2CC7A3D2807B8DD0462006A95EEF154FFB2BB37B696",
			"latest_block_height":   "520",
			"latest_block_time":     "2026-11-21T21:37:51.907814516Z",
			"earliest_block_hash":   "E578EC472DAC0246734BBF7A59378CB90D4F4392DC7B84D748025482D8116838",
			"earliest_app_hash":     "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
			"earliest_block_height": "1",
			"earliest_block_time":   "2026-11-21T21:29:04Z",
			"catching_up":           false,
		}
		if !reflect.DeepEqual(si, want) {
			t.Errorf("sync_info %v, want %v", si, want)
		}
		// Key order of the recorded status is kept.
		if !strings.Contains(body, `"sync_info":{"latest_block_hash":"FB9D`) || !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":-1,"result":{"node_info":{"protocol_version":`) {
			t.Errorf("key order not kept: %.200s", body)
		}
	})

	t.Run("dydx app genesis is served as a CometBFT genesis doc", func(t *testing.T) {
		srv := httptest.NewServer(New(loadRecording(t, "dydx"), Options{}).Handler())
		defer srv.Close()
		_, _, body := do(t, srv, "GET", "/genesis", "")
		if !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":-1,"result":{"genesis":{"genesis_time":"2026-11-21T21:29:04Z","chain_id":"localdydxprotocol","initial_height":"1","consensus_params":{"block":{"max_bytes":"4194304","max_gas":"-1"},`) {
			t.Errorf("genesis starts %.300s", body)
		}
		g := field(t, resultOf(t, body), "genesis").(map[string]any)
		if g["app_hash"] != "" || field(t, g, "consensus_params", "abci", "vote_extensions_enable_height") != "1" {
			t.Errorf("app_hash %v, vote_extensions_enable_height %v", g["app_hash"], field(t, g, "consensus_params", "abci", "vote_extensions_enable_height"))
		}
		if _, ok := g["consensus"]; ok {
			t.Error("app genesis key consensus is served")
		}
		if _, ok := field(t, g, "app_state", "clob").(map[string]any); !ok {
			t.Error("app_state.clob missing")
		}
	})

	t.Run("blockchain without params", func(t *testing.T) {
		_, _, body := do(t, srv, "GET", "/blockchain", "")
		res := resultOf(t, body)
		metas := res["block_metas"].([]any)
		if res["last_height"] != "299" || len(metas) != 20 {
			t.Fatalf("last_height %v, %d metas; want 299, 20", res["last_height"], len(metas))
		}
		for i, m := range metas {
			if h := field(t, m, "header", "height"); h != jsonNum(299-int64(i)) {
				t.Errorf("meta %d: height %v", i, h)
			}
		}
		if !strings.Contains(body, `"block_metas":[{"block_id":{"hash":"35FBC2ED905B485EE7DBA5B86F8F98C9B2C4EAE575B1A7AEAA8482DE21619B57","parts":{"total":1,"hash":"3BB38C895EC6BAB6CFF40AB410642474585967D6CF520A30A00B227E1155931D"}},"block_size":"`) {
			t.Errorf("first meta: %.400s", body)
		}
	})

	t.Run("abci_info", func(t *testing.T) {
		_, _, body := do(t, srv, "GET", "/abci_info", "")
		want := `{"jsonrpc":"2.0","id":-1,"result":{"response":{"data":"OsmosisApp","version":"31.0.0-rc0-6-g9829d39c16","last_block_height":"299","last_block_app_hash":"xIUQy0Iz7GuF8lhDsXbZVDaUEVTWOOhKGJwsCoyXpsk="}}}`
		if body != want {
			t.Errorf("abci_info\n%s\nwant\n%s", body, want)
		}
		dsrv := httptest.NewServer(New(loadRecording(t, "dydx"), Options{}).Handler())
		defer dsrv.Close()
		if code, _, body := do(t, dsrv, "GET", "/abci_info", ""); code != 404 || !strings.Contains(body, "Method not found") {
			t.Errorf("dydx (no abci_info recorded): %d %s", code, body)
		}
	})

	t.Run("empty request lists the endpoints", func(t *testing.T) {
		code, ctype, body := do(t, srv, "GET", "/", "")
		if code != 200 || ctype != "text/html" || !strings.Contains(body, "/block_results?height=_") || !strings.Contains(body, "/status") {
			t.Errorf("%d %s %.300s", code, ctype, body)
		}
	})
}

func jsonNum(v int64) string { return strings.Trim(string(quotedInt(v)), `"`) }

// TestFrozenTip checks every height-dependent method on a node whose tip is below the last
// recorded height.
func TestFrozenTip(t *testing.T) {
	rec := loadRecording(t, "osmosis")
	srv := httptest.NewServer(New(rec, Options{StartHeight: 100}).Handler())
	defer srv.Close()
	b100, _ := rec.block(100)
	b101, _ := rec.block(101)
	res100 := resultOf(t, `{"result":`+string(b100.Results)+`}`)

	_, _, body := do(t, srv, "GET", "/status", "")
	si := field(t, resultOf(t, body), "sync_info")
	if field(t, si, "latest_block_height") != "100" || field(t, si, "latest_block_hash") != b100.Hash ||
		field(t, si, "latest_app_hash") != b100.AppHash || field(t, si, "latest_block_time") != b100.Time {
		t.Errorf("sync_info %v", si)
	}
	for _, path := range []string{"/block?height=101", "/block_results?height=101", "/header?height=101"} {
		_, _, body := do(t, srv, "GET", path, "")
		want := `{"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":"height 101 must be less than or equal to the current blockchain height 100"}}`
		if body != want {
			t.Errorf("%s: %s", path, body)
		}
	}
	_, _, body = do(t, srv, "GET", "/block", "")
	if h := field(t, resultOf(t, body), "block", "header", "height"); h != "100" {
		t.Errorf("latest block height %v, want 100", h)
	}
	_, _, body = do(t, srv, "GET", "/validators", "")
	if v := resultOf(t, body); v["block_height"] != "101" || v["count"] != "1" || v["total"] != "1" {
		t.Errorf("validators %v", v)
	}
	_, _, body = do(t, srv, "GET", "/abci_info", "")
	if r := field(t, resultOf(t, body), "response"); field(t, r, "last_block_height") != "100" || field(t, r, "last_block_app_hash") != res100["app_hash"] {
		t.Errorf("abci_info response %v, want app hash %v", r, res100["app_hash"])
	}
	_, _, body = do(t, srv, "GET", "/blockchain?minHeight=95&maxHeight=200", "")
	if r := resultOf(t, body); r["last_height"] != "100" || len(r["block_metas"].([]any)) != 6 {
		t.Errorf("blockchain last_height %v, %d metas; want 100, 6", r["last_height"], len(r["block_metas"].([]any)))
	}
	_, _, body = do(t, srv, "GET", "/block_by_hash?hash=0x"+b101.Hash, "")
	if !strings.Contains(body, `"block":null`) {
		t.Errorf("unrevealed block 101 served by hash: %.200s", body)
	}
	_, _, body = do(t, srv, "GET", "/header_by_hash?hash=0x"+b100.Hash, "")
	if h := field(t, resultOf(t, body), "header", "height"); h != "100" {
		t.Errorf("header_by_hash height %v", h)
	}
}

// echoQuerier is the osmosis recording answering one query path: the
// request data back, and the height asked.
type echoQuerier struct{ *Recording }

func (q echoQuerier) ABCIQuery(path string, data []byte, height int64) ([]byte, error) {
	if path != "/echo" && path != "/store/bank/subspace" {
		return nil, ErrUnknownQuery(path)
	}
	return append(append([]byte{}, data...), byte(height)), nil
}

// TestABCIQuery: a Querier source answers abci_query as CometBFT does (the
// value base64, the height asked or the tip's), an application refusal
// as the response's code and log, and a height above the tip as the SDK
// refuses it, except for a store read, which the store answers; a source
// without queries has no such method. With LatestStoreReads a subspace
// read is answered at the tip whatever the height asked.
func TestABCIQuery(t *testing.T) {
	rec := loadRecording(t, "osmosis")
	srv := httptest.NewServer(New(echoQuerier{rec}, Options{StartHeight: 200}).Handler())
	defer srv.Close()
	for _, c := range []struct{ name, body, want string }{
		{"at a height", `{"jsonrpc":"2.0","id":1,"method":"abci_query","params":{"path":"/echo","data":"0A0B","height":"150","prove":false}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"response":{"code":0,"codespace":"","height":"150","index":"0","info":"","key":null,"log":"","proofOps":null,"value":"CguW"}}}`},
		{"at the tip", `{"jsonrpc":"2.0","id":1,"method":"abci_query","params":{"path":"/echo","data":""}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"response":{"code":0,"codespace":"","height":"200","index":"0","info":"","key":null,"log":"","proofOps":null,"value":"yA=="}}}`},
		{"an unknown path", `{"jsonrpc":"2.0","id":1,"method":"abci_query","params":{"path":"/nope","height":"150"}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"response":{"code":6,"codespace":"sdk","height":"150","index":"0","info":"","key":null,"log":"unknown query path: /nope","proofOps":null,"value":null}}}`},
		{"above the tip", `{"jsonrpc":"2.0","id":1,"method":"abci_query","params":{"path":"/echo","height":"201"}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"response":{"code":26,"codespace":"sdk","height":"201","index":"0","info":"","key":null,"log":"cannot query with height in the future; please provide a valid height: invalid height","proofOps":null,"value":null}}}`},
	} {
		if _, _, body := do(t, srv, "POST", "/", c.body); body != c.want {
			t.Errorf("%s\n%s\nwant\n%s", c.name, body, c.want)
		}
	}
	if _, _, body := do(t, srv, "GET", `/abci_query?path="/echo"&data=0x0A&height=150`, ""); !strings.Contains(body, `"value":"CpY="`) {
		t.Errorf("URI request: %s", body)
	}
	// A store read above the tip reaches the source (byte(1000) = 0xE8).
	if _, _, body := do(t, srv, "GET", `/abci_query?path="/store/bank/subspace"&height=1000`, ""); !strings.Contains(body, `"value":"6A=="`) {
		t.Errorf("a store read above the tip: %s", body)
	}
	latest := httptest.NewServer(New(echoQuerier{rec}, Options{StartHeight: 200, LatestStoreReads: true}).Handler())
	defer latest.Close()
	for _, c := range []struct{ path, want string }{
		{"/store/bank/subspace", `"value":"yA=="`}, // at 200, not 150
		{"/echo", `"value":"lg=="`},                // a gRPC-like read keeps to 150
	} {
		if _, _, body := do(t, latest, "GET", `/abci_query?path="`+c.path+`"&height=150`, ""); !strings.Contains(body, c.want) {
			t.Errorf("latest store reads, %s at 150: %s, want %s", c.path, body, c.want)
		}
	}
	plain := httptest.NewServer(New(rec, Options{}).Handler())
	defer plain.Close()
	if code, _, body := do(t, plain, "GET", "/abci_query?path=%22/echo%22", ""); code != 404 || !strings.Contains(body, "Method not found") {
		t.Errorf("a recording without queries: %d %s", code, body)
	}
}
