package cometbft

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// TestGenesisChunked: a node that refuses /genesis as too large (CometBFT's
// error) serves the document in base64 chunks, which Genesis joins.
func TestGenesisChunked(t *testing.T) {
	doc := `{"chain_id":"big-1","initial_height":"7","app_state":{"bank":{"balances":[]}}}`
	parts := []string{doc[:20], doc[20:50], doc[50:]}
	c := testClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params map[string]string `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("request: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "genesis":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"Internal error","data":"genesis response is large, please use the genesis_chunked API instead"}}`, req.ID)
		case "genesis_chunked":
			var i int
			fmt.Sscan(req.Params["chunk"], &i)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"chunk":"%d","total":"%d","data":"%s"}}`, req.ID, i, len(parts),
				base64.StdEncoding.EncodeToString([]byte(parts[i])))
		default:
			t.Errorf("method %s", req.Method)
		}
	}))
	got, err := c.Genesis(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != doc {
		t.Errorf("genesis %s, want %s", got, doc)
	}
}
