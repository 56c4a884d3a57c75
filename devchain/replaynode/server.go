package replaynode

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Limits and JSON-RPC error codes, as in CometBFT 0.38.
const (
	maxBodyBytes     = 1 << 20 // request body limit (CometBFT's default is 1,000,000 bytes)
	maxBatchRequests = 10      // CometBFT's default max_request_batch_size
	blockchainLimit  = 20      // at most 20 block metas per /blockchain call
	defaultPerPage   = 30
	maxPerPage       = 100

	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
)

// uriID is the id CometBFT puts in replies to URI (GET /method?arg=...) requests.
var uriID = json.RawMessage(`-1`)

// argKind is how a parameter is decoded (the Go type of the CometBFT handler's argument).
type argKind int

const (
	argInt64    argKind = iota // int64 or *int64: a JSON string holding an integer
	argInt                     // int or *int
	argUint                    // uint
	argBytes                   // []byte: base64 JSON string
	argHexBytes                // bytes.HexBytes: hex JSON string
	argString                  // string
)

type argSpec struct {
	name string
	kind argKind
}

// args holds the parameters that were given; absent ones are missing from the maps.
type args struct {
	ints  map[string]int64
	bytes map[string][]byte
}

func (a args) int(name string) (int64, bool) {
	v, ok := a.ints[name]
	return v, ok
}

type method struct {
	args []argSpec
	call func(ctx context.Context, a args) (json.RawMessage, error)
}

func (n *Node) routes() map[string]method {
	height := []argSpec{{"height", argInt64}}
	m := map[string]method{
		"health":          {call: func(context.Context, args) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }},
		"status":          {call: n.status},
		"genesis":         {call: n.genesisResult},
		"genesis_chunked": {args: []argSpec{{"chunk", argUint}}, call: n.genesisChunked},
		"block":           {args: height, call: n.blockResult},
		"block_results":   {args: height, call: n.blockResults},
		"header":          {args: height, call: n.headerResult},
		"block_by_hash":   {args: []argSpec{{"hash", argBytes}}, call: n.blockByHash},
		"header_by_hash":  {args: []argSpec{{"hash", argHexBytes}}, call: n.headerByHash},
		"blockchain":      {args: []argSpec{{"minHeight", argInt64}, {"maxHeight", argInt64}}, call: n.blockchain},
		"validators":      {args: []argSpec{{"height", argInt64}, {"page", argInt}, {"per_page", argInt}}, call: n.validators},
	}
	if n.src.ABCIInfo() != nil {
		m["abci_info"] = method{call: n.abciInfo}
	}
	if q, ok := n.src.(Querier); ok {
		m["abci_query"] = method{args: []argSpec{{"path", argString}, {"data", argHexBytes}, {"height", argInt64}},
			call: func(ctx context.Context, a args) (json.RawMessage, error) { return n.abciQuery(ctx, q, a) }}
	}
	return m
}

// Handler returns the HTTP handler serving JSON-RPC 2.0 POSTs (single and batch) at "/" and URI
// requests such as GET /block?height=5, with CometBFT 0.38's replies, error shapes and HTTP
// status codes; like CometBFT it answers a batch whose only reply is one object with that object,
// limits batches to 10 requests and bodies to 1 MiB, and it also accepts JSON numbers where
// CometBFT requires integers as JSON strings.
func (n *Node) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if e := recover(); e != nil {
				slog.Error("replaynode: panic in handler", "err", e, "path", r.URL.Path)
				writeJSON(w, http.StatusInternalServerError, errorReply(uriID, codeInternalError, "Internal error", fmt.Sprint(e)))
			}
		}()
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		if r.URL.Path == "/" {
			n.serveJSONRPC(w, r)
			return
		}
		m, ok := n.methods[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			writeJSON(w, http.StatusNotFound, errorReply(uriID, codeMethodNotFound, "Method not found", ""))
			return
		}
		n.serveURI(w, r, m)
	})
}

// rpcRequest is one JSON-RPC request; id is nil for a notification, otherwise a JSON string or
// integer (CometBFT truncates numeric ids to integers).
type rpcRequest struct {
	id     json.RawMessage
	method string
	params json.RawMessage
}

// UnmarshalJSON decodes a request, rejecting ids that are neither strings nor numbers as
// CometBFT does.
func (q *rpcRequest) UnmarshalJSON(b []byte) error {
	var v struct {
		ID     any             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch id := v.ID.(type) {
	case nil:
		return nil // notification
	case string:
		q.id, _ = json.Marshal(id)
	case float64:
		q.id = json.RawMessage(strconv.FormatInt(int64(id), 10))
	default:
		return fmt.Errorf("json-rpc ID (%v) is of unknown type (%T)", id, id)
	}
	q.method, q.params = v.Method, v.Params
	return nil
}

func (n *Node) serveJSONRPC(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorReply(nil, codeInvalidRequest, "Invalid Request", "error reading request body: "+err.Error()))
		return
	}
	if len(body) == 0 {
		n.writeEndpoints(w, r)
		return
	}
	var reqs []rpcRequest
	if err := json.Unmarshal(body, &reqs); err == nil {
		if len(reqs) > maxBatchRequests {
			writeJSON(w, http.StatusOK, errorReply(nil, codeInvalidRequest, "Invalid Request",
				fmt.Sprintf("batch request exceeds maximum (%d) allowed number of requests", maxBatchRequests)))
			return
		}
	} else {
		var req rpcRequest
		if err := json.Unmarshal(body, &req); err != nil {
			writeJSON(w, http.StatusInternalServerError, errorReply(nil, codeParseError, "Parse error. Invalid JSON", "error unmarshaling request: "+err.Error()))
			return
		}
		reqs = []rpcRequest{req}
	}
	ctx := r.Context()
	replies := make([][]byte, 0, len(reqs))
	for _, req := range reqs {
		if req.id == nil {
			continue // notifications get no reply
		}
		if ctx.Err() != nil {
			return // client went away
		}
		replies = append(replies, n.callJSON(ctx, req))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	switch len(replies) {
	case 0:
	case 1:
		// CometBFT writes a lone reply as an object, even when it answers a batch.
		_, _ = w.Write(replies[0])
	default:
		_, _ = w.Write(append(append([]byte{'['}, bytes.Join(replies, []byte{','})...), ']'))
	}
}

func (n *Node) callJSON(ctx context.Context, req rpcRequest) []byte {
	m, ok := n.methods[req.method]
	if !ok {
		return errorReply(req.id, codeMethodNotFound, "Method not found", "")
	}
	a, err := jsonParams(m.args, req.params)
	if err != nil {
		return errorReply(req.id, codeInvalidParams, "Invalid params", "error converting json params to arguments: "+err.Error())
	}
	res, err := m.call(ctx, a)
	if err != nil {
		return errorReply(req.id, codeInternalError, "Internal error", err.Error())
	}
	return successReply(req.id, res)
}

func (n *Node) serveURI(w http.ResponseWriter, r *http.Request, m method) {
	a, err := uriParams(m.args, r)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorReply(uriID, codeInvalidParams, "Invalid params", "error converting http params to arguments: "+err.Error()))
		return
	}
	res, err := m.call(r.Context(), a)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorReply(uriID, codeInternalError, "Internal error", err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, successReply(uriID, res))
}

// writeEndpoints answers an empty JSON-RPC request with the list of routes, as CometBFT does.
func (n *Node) writeEndpoints(w http.ResponseWriter, r *http.Request) {
	var noArgs, withArgs []string
	for name, m := range n.methods {
		if len(m.args) == 0 {
			noArgs = append(noArgs, name)
		} else {
			withArgs = append(withArgs, name)
		}
	}
	sort.Strings(noArgs)
	sort.Strings(withArgs)
	var b strings.Builder
	b.WriteString("<html><body><br>Available endpoints:<br>")
	host := html.EscapeString(r.Host)
	for _, name := range noArgs {
		fmt.Fprintf(&b, "<a href=\"//%s/%s\">//%s/%s</a></br>", host, name, host, name)
	}
	b.WriteString("<br>Endpoints that require arguments:<br>")
	for _, name := range withArgs {
		names := make([]string, 0, len(n.methods[name].args))
		for _, s := range n.methods[name].args {
			names = append(names, s.name+"=_")
		}
		link := fmt.Sprintf("//%s/%s?%s", host, name, strings.Join(names, "&amp;"))
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a></br>", link, link)
	}
	b.WriteString("</body></html>")
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, b.String())
}

func writeJSON(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

func successReply(id, result json.RawMessage) []byte {
	b := make([]byte, 0, len(result)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// errorReply renders a JSON-RPC error; a nil id is omitted and an empty data is omitted, as in
// CometBFT.
func errorReply(id json.RawMessage, code int, message, data string) []byte {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    string `json:"data,omitempty"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, message, data}})
	if err != nil { // cannot happen: every field is plain data
		return []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"}}`)
	}
	return b
}

// jsonParams decodes JSON-RPC params given as an object (by name) or an array (by position).
// Integers may be JSON strings, as CometBFT requires, or JSON numbers, which CometBFT rejects.
func jsonParams(specs []argSpec, raw json.RawMessage) (args, error) {
	a := args{ints: map[string]int64{}, bytes: map[string][]byte{}}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return a, nil
	}
	values := make(map[string]json.RawMessage, len(specs))
	switch raw[0] {
	case '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return a, fmt.Errorf("unknown type for JSON params: %w. Expected map or array", err)
		}
		values = m
	case '[':
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return a, fmt.Errorf("unknown type for JSON params: %w. Expected map or array", err)
		}
		if len(list) != len(specs) {
			names := make([]string, len(specs))
			for i, s := range specs {
				names[i] = s.name
			}
			return a, fmt.Errorf("expected %d parameters (%v), got %d", len(specs), names, len(list))
		}
		for i, s := range specs {
			values[s.name] = list[i]
		}
	default:
		return a, errors.New("unknown type for JSON params. Expected map or array")
	}
	for _, s := range specs {
		v, ok := values[s.name]
		if !ok || len(v) == 0 || isNull(v) {
			continue
		}
		if err := a.decodeJSON(s, v); err != nil {
			return a, err
		}
	}
	return a, nil
}

func (a args) decodeJSON(s argSpec, v json.RawMessage) error {
	switch s.kind {
	case argInt64, argInt, argUint:
		var str string
		if v[0] == '"' {
			if err := json.Unmarshal(v, &str); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		} else {
			str = string(v) // a JSON number
		}
		return a.setInt(s, str)
	case argBytes:
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return fmt.Errorf("%s: expected a base64 string: %w", s.name, err)
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		a.bytes[s.name] = b
	case argHexBytes:
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return fmt.Errorf("%s: expected a hex string: %w", s.name, err)
		}
		b, err := hex.DecodeString(str)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		a.bytes[s.name] = b
	case argString:
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return fmt.Errorf("%s: expected a string: %w", s.name, err)
		}
		a.bytes[s.name] = []byte(str)
	}
	return nil
}

func (a args) setInt(s argSpec, str string) error {
	bits := 64
	if s.kind == argInt {
		bits = strconv.IntSize
	}
	v, err := strconv.ParseInt(str, 10, bits)
	if err != nil {
		return fmt.Errorf("invalid integer %q for %s", str, s.name)
	}
	if s.kind == argUint && v < 0 {
		return fmt.Errorf("invalid unsigned integer %q for %s", str, s.name)
	}
	a.ints[s.name] = v
	return nil
}

var reInt = regexp.MustCompile(`^-?[0-9]+$`)

// uriParams decodes URI query (or form) parameters the way CometBFT's URI handler does: integers
// bare or quoted, byte strings as 0x-prefixed hex or a quoted string.
func uriParams(specs []argSpec, r *http.Request) (args, error) {
	a := args{ints: map[string]int64{}, bytes: map[string][]byte{}}
	for _, s := range specs {
		v := r.URL.Query().Get(s.name)
		if v == "" {
			v = r.FormValue(s.name)
		}
		if v == "" {
			continue
		}
		quoted := len(v) >= 2 && strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`)
		isHex := strings.HasPrefix(strings.ToLower(v), "0x")
		switch s.kind {
		case argInt64, argInt, argUint:
			switch {
			case reInt.MatchString(v):
			case quoted && reInt.MatchString(v[1:len(v)-1]):
				v = v[1 : len(v)-1]
			case isHex:
				return a, fmt.Errorf("got a hex string arg, but expected an integer for %s", s.name)
			default:
				return a, fmt.Errorf("invalid integer %q for %s", v, s.name)
			}
			if err := a.setInt(s, v); err != nil {
				return a, err
			}
		case argBytes, argHexBytes:
			switch {
			case isHex:
				b, err := hex.DecodeString(v[2:])
				if err != nil {
					return a, fmt.Errorf("%s: %w", s.name, err)
				}
				a.bytes[s.name] = b
			case quoted:
				a.bytes[s.name] = []byte(v[1 : len(v)-1])
			default:
				return a, fmt.Errorf("%s: expected 0x-prefixed hex or a quoted string, got %q", s.name, v)
			}
		case argString:
			if quoted {
				v = v[1 : len(v)-1]
			}
			a.bytes[s.name] = []byte(v)
		}
	}
	return a, nil
}

// getHeight resolves an optional height against the latest height and the lowest recorded height
// with CometBFT's checks and messages.
func (n *Node) getHeight(latest int64, a args) (int64, error) {
	h, ok := a.int("height")
	if !ok {
		return latest, nil
	}
	if h <= 0 {
		return 0, fmt.Errorf("height must be greater than 0, but got %d", h)
	}
	if h > latest {
		return 0, fmt.Errorf("height %d must be less than or equal to the current blockchain height %d", h, latest)
	}
	if base := n.src.FirstHeight(); h < base {
		return 0, fmt.Errorf("height %d is not available, lowest height is %d", h, base)
	}
	return h, nil
}

// recorded returns the recorded block at a height already checked by getHeight.
func (n *Node) recorded(h int64) (*Block, error) {
	return n.src.Block(h)
}

func (n *Node) blockResult(_ context.Context, a args) (json.RawMessage, error) {
	h, err := n.getHeight(n.Height(), a)
	if err != nil {
		return nil, err
	}
	b, err := n.recorded(h)
	if err != nil {
		return nil, err
	}
	return b.Block, nil
}

func (n *Node) blockResults(_ context.Context, a args) (json.RawMessage, error) {
	h, err := n.getHeight(n.Height(), a)
	if err != nil {
		return nil, err
	}
	b, err := n.recorded(h)
	if err != nil {
		return nil, err
	}
	return b.Results, nil
}

func (n *Node) headerResult(_ context.Context, a args) (json.RawMessage, error) {
	h, err := n.getHeight(n.Height(), a)
	if err != nil {
		return nil, err
	}
	b, err := n.recorded(h)
	if err != nil {
		return nil, err
	}
	return wrap("header", b.Header)
}

// byHash returns the revealed block with the given hash, or nil.
func (n *Node) byHash(hash []byte) *Block {
	b, ok := n.src.BlockByHash(strings.ToUpper(hex.EncodeToString(hash)))
	if !ok || b.Height > n.Height() {
		return nil
	}
	return b
}

func (n *Node) blockByHash(_ context.Context, a args) (json.RawMessage, error) {
	if b := n.byHash(a.bytes["hash"]); b != nil {
		return b.Block, nil
	}
	return json.RawMessage(`{"block_id":{"hash":"","parts":{"total":0,"hash":""}},"block":null}`), nil
}

func (n *Node) headerByHash(_ context.Context, a args) (json.RawMessage, error) {
	if b := n.byHash(a.bytes["hash"]); b != nil {
		return wrap("header", b.Header)
	}
	return json.RawMessage(`{"header":null}`), nil
}

// blockchain returns block metas for minHeight..maxHeight, highest first, at most 20, with
// CometBFT's filterMinMax rules.
func (n *Node) blockchain(_ context.Context, a args) (json.RawMessage, error) {
	tip, base := n.Height(), n.src.FirstHeight()
	lo, _ := a.int("minHeight")
	hi, _ := a.int("maxHeight")
	if lo < 0 || hi < 0 {
		return nil, errors.New("heights must be non-negative")
	}
	if lo == 0 {
		lo = 1
	}
	if hi == 0 {
		hi = tip
	}
	hi = min(tip, hi)
	lo = max(base, lo)
	lo = max(lo, hi-blockchainLimit+1)
	if lo > hi {
		return nil, fmt.Errorf("min height %d can't be greater than max height %d", lo, hi)
	}
	metas := make([]json.RawMessage, 0, hi-lo+1)
	for h := hi; h >= lo; h-- {
		b, err := n.recorded(h)
		if err != nil {
			return nil, err
		}
		metas = append(metas, b.Meta)
	}
	list, err := json.Marshal(metas)
	if err != nil {
		return nil, fmt.Errorf("encode block metas: %w", err)
	}
	o := newObject()
	o.set("last_height", quotedInt(tip))
	o.set("block_metas", list)
	return o.marshal()
}

// validators serves the recorded validator set (the set at the recording's last height) for every
// height from the first recorded height to the revealed height + 1, which is the range a CometBFT
// node accepts; block_height is the requested height, and page/per_page paginate as in CometBFT.
func (n *Node) validators(_ context.Context, a args) (json.RawMessage, error) {
	h, err := n.getHeight(n.Height()+1, a)
	if err != nil {
		return nil, err
	}
	total := len(n.src.Validators())
	perPage := defaultPerPage
	if v, ok := a.int("per_page"); ok && v >= 1 {
		perPage = int(min(v, maxPerPage))
	}
	page := int64(1)
	if v, ok := a.int("page"); ok {
		pages := int64((total-1)/perPage + 1)
		if v <= 0 || v > pages {
			return nil, fmt.Errorf("page should be within [1, %d] range, given %d", pages, v)
		}
		page = v
	}
	skip := int(page-1) * perPage
	vals := n.src.Validators()[skip : skip+min(perPage, total-skip)]
	list, err := json.Marshal(vals)
	if err != nil {
		return nil, fmt.Errorf("encode validators: %w", err)
	}
	o := newObject()
	o.set("block_height", quotedInt(h))
	o.set("validators", list)
	o.set("count", quotedInt(int64(len(vals))))
	o.set("total", quotedInt(int64(total)))
	return o.marshal()
}

// status serves the recorded status with sync_info's latest_* fields taken from the revealed
// block and earliest_* fields from the first recorded block.
func (n *Node) status(_ context.Context, _ args) (json.RawMessage, error) {
	st, err := parseObject(n.src.Status())
	if err != nil {
		return nil, fmt.Errorf("recorded status: %w", err)
	}
	raw, _ := st.get("sync_info")
	si, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("recorded status sync_info: %w", err)
	}
	latest, earliest, err := n.ends()
	if err != nil {
		return nil, err
	}
	si.set("latest_block_hash", jsonString(latest.Hash))
	si.set("latest_app_hash", jsonString(latest.AppHash))
	si.set("latest_block_height", quotedInt(latest.Height))
	si.set("latest_block_time", jsonString(latest.Time))
	si.set("earliest_block_hash", jsonString(earliest.Hash))
	si.set("earliest_app_hash", jsonString(earliest.AppHash))
	si.set("earliest_block_height", quotedInt(earliest.Height))
	si.set("earliest_block_time", jsonString(earliest.Time))
	si.set("catching_up", json.RawMessage("false"))
	siJSON, err := si.marshal()
	if err != nil {
		return nil, err
	}
	st.set("sync_info", siJSON)
	return st.marshal()
}

// ends describes the revealed height and the first one, through the
// source's Summarizer when it has one.
func (n *Node) ends() (latest, earliest *Block, err error) {
	if s, ok := n.src.(Summarizer); ok {
		l, e := s.Summary(n.Height()), s.Summary(n.src.FirstHeight())
		return &l, &e, nil
	}
	if latest, err = n.recorded(n.Height()); err != nil {
		return nil, nil, err
	}
	if earliest, err = n.recorded(n.src.FirstHeight()); err != nil {
		return nil, nil, err
	}
	return latest, earliest, nil
}

// abciInfo serves the recorded abci_info with last_block_height set to the revealed height and
// last_block_app_hash to the app hash after that block, when the recording has it.
func (n *Node) abciInfo(_ context.Context, _ args) (json.RawMessage, error) {
	o, err := parseObject(n.src.ABCIInfo())
	if err != nil {
		return nil, fmt.Errorf("recorded abci_info: %w", err)
	}
	raw, _ := o.get("response")
	resp, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("recorded abci_info response: %w", err)
	}
	tip := n.Height()
	resp.set("last_block_height", quotedInt(tip))
	if h := n.appHashAfter(tip); h != "" {
		resp.set("last_block_app_hash", jsonString(h))
	}
	respJSON, err := resp.marshal()
	if err != nil {
		return nil, err
	}
	o.set("response", respJSON)
	return o.marshal()
}

// abciQuery answers abci_query as CometBFT 0.38 does: the application's
// response, with its code and log when it refuses; the height defaults to
// the revealed tip, and a height above it is refused as the SDK refuses a
// height it has not committed, except for a store read ("/store/..."),
// which baseapp hands to the store without that check: the Querier
// answers it.
func (n *Node) abciQuery(_ context.Context, q Querier, a args) (json.RawMessage, error) {
	path := string(a.bytes["path"])
	h, ok := a.int("height")
	if !ok || h == 0 {
		h = n.Height()
	}
	resp := map[string]any{"code": 0, "log": "", "info": "", "index": "0", "key": nil, "value": nil, "proofOps": nil,
		"height": strconv.FormatInt(h, 10), "codespace": ""}
	var value []byte
	var err error
	if n.latestStores && strings.HasPrefix(path, "/store/") && strings.HasSuffix(path, "/subspace") {
		h = n.Height()
	}
	if h > n.Height() && !strings.HasPrefix(path, "/store/") {
		err = &QueryError{Code: 26, Codespace: "sdk",
			Log: "cannot query with height in the future; please provide a valid height: invalid height"}
	} else {
		value, err = q.ABCIQuery(path, a.bytes["data"], h)
	}
	var qe *QueryError
	switch {
	case errors.As(err, &qe):
		resp["code"], resp["codespace"], resp["log"] = qe.Code, qe.Codespace, qe.Log
	case err != nil:
		return nil, err
	default:
		resp["value"] = value // encoding/json writes []byte as base64, as CometBFT does
	}
	return json.Marshal(map[string]any{"response": resp})
}

// appHashAfter returns the base64 app hash after executing height h: block_results' app_hash, or
// else the next block's header app_hash; "" when neither is recorded.
func (n *Node) appHashAfter(h int64) string {
	if b, err := n.src.Block(h); err == nil && b.ResAppHash != "" {
		return b.ResAppHash
	}
	if next, err := n.src.Block(h + 1); err == nil && h < n.src.LastHeight() {
		if raw, err := hex.DecodeString(next.AppHash); err == nil {
			return base64.StdEncoding.EncodeToString(raw)
		}
	}
	return ""
}

func (n *Node) genesisResult(_ context.Context, _ args) (json.RawMessage, error) {
	if len(n.genesisChunks) > 1 {
		return nil, errors.New("genesis response is large, please use the genesis_chunked API instead")
	}
	return wrap("genesis", n.src.Genesis())
}

func (n *Node) genesisChunked(_ context.Context, a args) (json.RawMessage, error) {
	if len(n.genesisChunks) == 0 {
		return nil, errors.New("service configuration error, there are no chunks")
	}
	id, _ := a.int("chunk")
	if id > int64(len(n.genesisChunks)-1) {
		return nil, fmt.Errorf("there are %d chunks, %d is invalid", len(n.genesisChunks)-1, id)
	}
	o := newObject()
	o.set("chunk", quotedInt(id))
	o.set("total", quotedInt(int64(len(n.genesisChunks))))
	o.set("data", jsonString(n.genesisChunks[id]))
	return o.marshal()
}

// object is a JSON object that keeps its key order, so rewritten replies keep the node's layout.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func newObject() *object { return &object{vals: map[string]json.RawMessage{}} }

// parseObject decodes a JSON object, keeping key order; a repeated key keeps its first position
// and its last value.
func parseObject(raw []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("decode object: not a JSON object")
	}
	o := newObject()
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("decode object: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("decode object: key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("decode object: %s: %w", key, err)
		}
		o.set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decode object: data after the object")
	}
	return o, nil
}

func (o *object) has(k string) bool { _, ok := o.vals[k]; return ok }

func (o *object) get(k string) (json.RawMessage, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// marshal renders the object compactly.
func (o *object) marshal() (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Compact(&out, b.Bytes()); err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	return out.Bytes(), nil
}

func wrap(key string, v json.RawMessage) (json.RawMessage, error) {
	o := newObject()
	o.set(key, v)
	return o.marshal()
}

func quotedInt(v int64) json.RawMessage {
	return json.RawMessage(`"` + strconv.FormatInt(v, 10) + `"`)
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

// unquote strips the quotes of a JSON string holding a number, so "1" and 1 decode alike.
func unquote(b json.RawMessage) json.RawMessage {
	b = bytes.TrimSpace(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		return b[1 : len(b)-1]
	}
	return b
}

// compact returns b without insignificant whitespace (b itself if it is not valid JSON, which the
// callers have already ruled out).
func compact(b []byte) json.RawMessage {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}

func compactString(b []byte) string {
	s := string(compact(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
